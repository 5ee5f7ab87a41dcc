// Agent runs a langchaingo ReAct agent whose tool is the knowledge base:
// the model decides to look the question up, the pipeline answers with
// citations, and the model writes the final answer from them.
//
// The agent's model is any OpenAI-compatible server (or Ollama), set by the
// environment as for the CLI:
//
//	OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=qwen2.5:7b-instruct \
//	    go run ./examples/agent "退货要在几天内发起？"
//	OPENAI_API_KEY=sk-... go run ./examples/agent -generate "How long do refunds take?"
//
// With -generate the pipeline writes its answers with the same model;
// without it the pipeline answers offline (extractive, with citations) and
// only the agent uses the model. OTEL_EXPORTER_OTLP_ENDPOINT sends the
// traces to a collector such as Jaeger (docs/tracing.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
	"github.com/tmc/langchaingo/tools"

	"github.com/adaptrag/adaptrag"
	lc "github.com/adaptrag/adaptrag/integrations/langchaingo"
	"github.com/adaptrag/adaptrag/kb"
	"github.com/adaptrag/adaptrag/llm"
	"github.com/adaptrag/adaptrag/retrieval/embed"
	"github.com/adaptrag/adaptrag/telemetry"
)

func main() {
	generate := flag.Bool("generate", false, "let the pipeline write its answers with the model too")
	flag.Parse()
	question := strings.Join(flag.Args(), " ")
	if question == "" {
		question = "退货要在几天内发起？"
	}
	ctx := context.Background()
	tel, err := telemetry.Start(ctx, telemetry.Config{ServiceName: "adaptrag-agent"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	answer, err := run(ctx, config{model: llm.ConfigFromEnv(), generate: *generate}, question, os.Stderr)
	if serr := tel.Shutdown(ctx); err == nil && serr != nil {
		fmt.Fprintln(os.Stderr, "agent: telemetry:", serr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	fmt.Println(answer)
}

// config is what the example runs with.
type config struct {
	model    llm.Config // the agent's model
	generate bool       // the pipeline writes its answers with the model
}

// run answers question with a one-shot ReAct agent and logs each tool call
// and its observation to log.
func run(ctx context.Context, c config, question string, log io.Writer) (string, error) {
	model, err := chatModel(c.model)
	if err != nil {
		return "", err
	}
	emb := embed.NewHashing(embed.HashingConfig{})
	k, err := kb.Sample(ctx, emb)
	if err != nil {
		return "", err
	}
	defer k.Close()
	deps := adaptrag.Deps{Docs: k.Docs, FAQ: k.FAQ, Embedder: emb}
	if c.generate {
		if deps.Generator, err = llm.New(c.model); err != nil {
			return "", err
		}
	}
	pipe, err := adaptrag.New(ctx, deps, adaptrag.Options{})
	if err != nil {
		return "", err
	}
	kbTool := loggedTool{Tool: lc.NewTool(pipe, lc.ToolConfig{}), log: log}
	agent := agents.NewOneShotAgent(model, []tools.Tool{kbTool}, agents.WithMaxIterations(4))
	// The application's own user: the tenant and actor come from here,
	// never from the model.
	ctx = lc.WithCaller(ctx, lc.Caller{Actor: "example-user"})
	answer, err := chains.Run(ctx, agents.NewExecutor(agent), question)
	if err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
	return answer, nil
}

// chatModel builds the agent's langchaingo model from the environment's
// settings.
func chatModel(c llm.Config) (llms.Model, error) {
	switch c.Provider() {
	case "openai":
		opts := []openai.Option{openai.WithToken(c.APIKey), openai.WithModel(c.Model)}
		if c.APIKey == "" {
			opts[0] = openai.WithToken("unused") // local servers take any token
		}
		if c.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(c.BaseURL))
		}
		if c.Model == "" {
			opts[1] = openai.WithModel(llm.DefaultOpenAIModel)
		}
		return openai.New(opts...)
	case "ollama":
		name := c.OllamaModel
		if name == "" {
			name = llm.DefaultOllamaModel
		}
		return ollama.New(ollama.WithServerURL(c.OllamaHost), ollama.WithModel(name))
	}
	return nil, errors.New("no model: set OPENAI_BASE_URL (and OPENAI_MODEL, OPENAI_API_KEY) or OLLAMA_HOST")
}

// loggedTool logs each call of a tool and the first line of its answer.
type loggedTool struct {
	tools.Tool
	log io.Writer
}

func (t loggedTool) Call(ctx context.Context, input string) (string, error) {
	fmt.Fprintf(t.log, "-> %s(%q)\n", t.Name(), input)
	out, err := t.Tool.Call(ctx, input)
	first, _, _ := strings.Cut(out, "\n")
	fmt.Fprintf(t.log, "<- %s\n", first)
	return out, err
}
