package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

// TestAgentEndToEnd runs the agent against a scripted model on the
// loopback OpenAI-wire server: the model first asks for the knowledge-base
// tool, then writes its final answer from the observation's sources.
func TestAgentEndToEnd(t *testing.T) {
	const question = "退货要在几天内发起？"
	source := regexp.MustCompile(`\[\d+\] (\S+)`)
	srv := llmtest.NewServer(t, func(r llmtest.Request) llmtest.Reply {
		// The format instructions mention "Observation:" too: look after
		// the question only.
		_, scratch, _ := strings.Cut(r.PromptText(), "Question: "+question)
		_, obs, seen := strings.Cut(scratch, "Observation:")
		if !seen {
			return llmtest.Reply{Content: "Thought: the knowledge base has the return policy.\nAction: knowledge_base\nAction Input: " + question}
		}
		m := source.FindStringSubmatch(obs)
		if m == nil {
			return llmtest.Reply{Content: "Final Answer: the knowledge base gave no source"}
		}
		return llmtest.Reply{Content: "Thought: I now know the final answer\nFinal Answer: 签收后 7 天内可以发起无理由退货（来源：" + m[1] + "）"}
	})
	var log bytes.Buffer
	answer, err := run(context.Background(), config{model: llm.Config{BaseURL: srv.URL, Model: "scripted"}}, question, &log)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), `-> knowledge_base("`+question+`")`) {
		t.Errorf("the tool was not called with the question; log:\n%s", log.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	obs := reqs[1].PromptText()
	if !strings.Contains(obs, "Observation:") || !strings.Contains(obs, "Sources:") {
		t.Fatalf("the second call did not carry the tool's answer: %q", obs)
	}
	_, scratch, _ := strings.Cut(obs, "Question: "+question)
	m := source.FindStringSubmatch(scratch)
	if m == nil || !strings.Contains(answer, m[1]) || !strings.Contains(m[1], "/") {
		t.Errorf("final answer %q does not cite the passage %v", answer, m)
	}
}

func TestAgentNeedsAModel(t *testing.T) {
	if _, err := run(context.Background(), config{}, "x", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("err = %v", err)
	}
}
