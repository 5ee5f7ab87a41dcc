package api_test

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/adaptrag/adaptrag/api"
)

func resolved(t *testing.T, name string) *jsonschema.Resolved {
	t.Helper()
	b, err := api.Schema(name)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rs
}

func TestEverySchemaResolves(t *testing.T) {
	for _, name := range api.SchemaNames {
		resolved(t, name)
	}
	if _, err := api.Schema("nope"); err == nil {
		t.Error("an unknown schema name gave no error")
	}
}

// The request schemas say what the service accepts: a question is
// required, fields are known, values are in range.
func TestRequestSchemas(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{api.SchemaAskRequest, `{"question": "q"}`, true},
		{api.SchemaAskRequest, `{"question": "q", "history": [{"role": "user", "content": "x"}], "debug": true, "timeout_ms": 5}`, true},
		{api.SchemaAskRequest, `{}`, false},
		{api.SchemaAskRequest, `{"question": "q", "extra": 1}`, false},
		{api.SchemaAskRequest, `{"question": "q", "history": [{"role": "system", "content": "x"}]}`, false},
		{api.SchemaAskRequest, `{"question": "q", "timeout_ms": -1}`, false},
		{api.SchemaSearchRequest, `{"query": "q", "k": 100, "mode": "dense"}`, true},
		{api.SchemaSearchRequest, `{"query": "q", "k": 101}`, false},
		{api.SchemaSearchRequest, `{"query": "q", "mode": "sparse"}`, false},
		{api.SchemaError, `{"error": {"code": "timeout", "message": "m", "run_id": "r"}}`, true},
		{api.SchemaError, `{"error": {"code": "timeout"}}`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.body), &v); err != nil {
			t.Fatal(err)
		}
		if err := resolved(t, tc.name).Validate(v); (err == nil) != tc.ok {
			t.Errorf("%s %s: valid = %v, want %v (%v)", tc.name, tc.body, err == nil, tc.ok, err)
		}
	}
}
