package llmtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/adaptrag/adaptrag/llm/llmtest"
)

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func TestWireFormat(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Refusal: "no"}))
	_, out := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"temperature":0}`)
	msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != nil || msg["refusal"] != "no" {
		t.Fatalf("message = %v", msg)
	}
	r := srv.Requests()[0]
	if r.LastUser() != "hi" || r.Temperature == nil || *r.Temperature != 0 || r.ResponseFormat != nil {
		t.Fatalf("recorded %+v", r)
	}
}

func TestStatusAndBadRequest(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Fixed(llmtest.Reply{Status: 503}))
	resp, out := post(t, srv.URL, `{"model":"m","messages":[]}`)
	if resp.StatusCode != 503 || out["error"] == nil {
		t.Fatalf("status %d body %v", resp.StatusCode, out)
	}
	resp, _ = post(t, srv.URL, `not json`)
	if resp.StatusCode != 400 || srv.Count() != 1 {
		t.Fatalf("status %d, %d recorded", resp.StatusCode, srv.Count())
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "你好": 2, "你好 abcd": 3}
	for in, want := range tests {
		if got := llmtest.EstimateTokens(in); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func Example() {
	srv := llmtest.Start(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "you said: " + r.LastUser(), PromptTokens: 3, CompletionTokens: 3}
	})
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json",
		bytes.NewBufferString(`{"model":"m","messages":[{"role":"user","content":"ping"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct{ Message struct{ Content string } }
		Usage   struct {
			TotalTokens int `json:"total_tokens"`
		}
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	fmt.Println(out.Choices[0].Message.Content, out.Usage.TotalTokens, srv.Count())
	// Output: you said: ping 6 1
}
