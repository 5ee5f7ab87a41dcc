package llm

import (
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Default model names used when Config leaves them empty.
const (
	DefaultOpenAIModel = "gpt-4o-mini"
	DefaultOllamaModel = "qwen2.5:7b-instruct"
	// DefaultOpenAIBaseURL is used when an API key is set without a base URL.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
)

// Config says which model server to reach. The zero value means "no model":
// Configured reports false and New returns ErrNotConfigured, which callers
// treat as the offline mode.
//
// Config redacts APIKey when printed with fmt (String, GoString) or logged
// with log/slog (LogValue), so a Config can go into a run's log as is.
type Config struct {
	// BaseURL of an OpenAI-compatible server, e.g. "http://localhost:8000/v1"
	// for vLLM or "http://localhost:11434/v1" for Ollama's compatible API.
	// Empty means DefaultOpenAIBaseURL when APIKey is set.
	BaseURL string
	// APIKey for the OpenAI-compatible server. Local servers often need none.
	APIKey string
	// Model name; empty means DefaultOpenAIModel, or OllamaModel/
	// DefaultOllamaModel for Ollama.
	Model string
	// OllamaHost is the URL of a native Ollama server ("http://localhost:11434").
	// It is used only when neither APIKey nor BaseURL is set.
	OllamaHost string
	// OllamaModel overrides Model for the native Ollama client.
	OllamaModel string
	// Timeout bounds each call; 0 means no limit beyond the caller's context.
	Timeout time.Duration
}

// ConfigFromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL,
// OLLAMA_HOST and OLLAMA_MODEL. Unset variables leave fields empty.
func ConfigFromEnv() Config {
	return Config{
		APIKey:      os.Getenv("OPENAI_API_KEY"),
		BaseURL:     os.Getenv("OPENAI_BASE_URL"),
		Model:       os.Getenv("OPENAI_MODEL"),
		OllamaHost:  os.Getenv("OLLAMA_HOST"),
		OllamaModel: os.Getenv("OLLAMA_MODEL"),
	}
}

// Configured reports whether any server is set. When it is false the
// project runs offline.
func (c Config) Configured() bool {
	return c.openAICompatible() || c.OllamaHost != ""
}

func (c Config) openAICompatible() bool { return c.APIKey != "" || c.BaseURL != "" }

// Provider names the client New would build: "openai", "ollama" or "" when
// nothing is configured.
func (c Config) Provider() string {
	switch {
	case c.openAICompatible():
		return "openai"
	case c.OllamaHost != "":
		return "ollama"
	}
	return ""
}

func redact(key string) string {
	if key == "" {
		return ""
	}
	return "[REDACTED]"
}

// String formats the config with the API key redacted.
func (c Config) String() string {
	return fmt.Sprintf("llm.Config{BaseURL:%q APIKey:%q Model:%q OllamaHost:%q OllamaModel:%q Timeout:%s}",
		c.BaseURL, redact(c.APIKey), c.Model, c.OllamaHost, c.OllamaModel, c.Timeout)
}

// GoString is used by %#v; it redacts the API key too.
func (c Config) GoString() string { return c.String() }

// LogValue implements slog.LogValuer with the API key redacted.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", c.Provider()),
		slog.String("base_url", c.BaseURL),
		slog.String("api_key", redact(c.APIKey)),
		slog.String("model", c.Model),
		slog.String("ollama_host", c.OllamaHost),
		slog.Duration("timeout", c.Timeout),
	)
}
