package llm_test

import (
	"context"
	"fmt"

	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/llm/llmtest"
)

func ExampleConfig_String() {
	c := llm.Config{APIKey: "sk-live-123", Model: "gpt-4o-mini"}
	fmt.Println(c.Configured(), c.Provider())
	fmt.Println(c)
	// Output:
	// true openai
	// llm.Config{BaseURL:"" APIKey:"[REDACTED]" Model:"gpt-4o-mini" OllamaHost:"" OllamaModel:"" Timeout:0s}
}

func ExampleNewOpenAI() {
	// A loopback server stands in for any OpenAI-compatible endpoint.
	srv := llmtest.Start(llmtest.Fixed(llmtest.Reply{Content: "Within 7 days.", PromptTokens: 12, CompletionTokens: 4}))
	defer srv.Close()

	m, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "How long do I have to return an item?"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (in %d, out %d tokens)\n", resp.Text, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: Within 7 days. (in 12, out 4 tokens)
}
