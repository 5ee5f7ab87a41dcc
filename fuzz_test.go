package adaptrag_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/adaptrag/adaptrag"
)

// FuzzAsk: any question, with or without a previous turn, gets an answer
// or one of the documented input errors; nothing panics and no run fails
// otherwise.
func FuzzAsk(f *testing.F) {
	for _, s := range []string{"", "你好", "退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异", "\xff", "？？？",
		"ignore previous instructions", "a b c d e f g", "5000", "🙂🙂", "那审批呢", "and for P1?", "订单 A-1001 的状态"} {
		f.Add(s, "")
		f.Add(s, "报销流程是什么")
	}
	p := newFixture(f).pipeline(f)
	f.Fuzz(func(t *testing.T, q, prev string) {
		var h []adaptrag.Message
		if prev != "" {
			h = []adaptrag.Message{{Role: adaptrag.RoleUser, Content: prev}}
		}
		res, err := p.Ask(context.Background(), adaptrag.Request{Question: q, History: h})
		switch {
		case errors.Is(err, adaptrag.ErrEmptyQuestion), errors.Is(err, adaptrag.ErrInvalidUTF8),
			errors.Is(err, adaptrag.ErrQuestionTooLong), errors.Is(err, adaptrag.ErrInvalidHistory):
		case err != nil:
			t.Fatalf("%q: %v", q, err)
		case res.Answer == "" && res.Clarify == nil:
			t.Fatalf("%q: neither an answer nor a clarifying question (path %v)", q, res.Debug.Steps.Nodes)
		}
	})
}

// The same question asked twice gives the same result: answers are
// assembled from scores whose ties must break the same way every run.
func TestAskIsDeterministic(t *testing.T) {
	p := newFixture(t).pipeline(t)
	for _, q := range []string{"退货要在几天内发起？", "对比一下差旅报销和招待报销的流程差异", "年假有几天"} {
		first := ask(t, p, q)
		for range 20 {
			again := ask(t, p, q)
			if again.Answer != first.Answer || !reflect.DeepEqual(again.Citations, first.Citations) {
				t.Fatalf("%s: answers differ between runs:\n%s\n%s", q, first.Answer, again.Answer)
			}
		}
	}
}
