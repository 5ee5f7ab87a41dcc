package main

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/adaptrag/adaptrag/api"
)

// ask --json prints the v1 response, which validates against the v1
// schema; --debug adds the internal record, and only then.
func TestAskJSONIsV1(t *testing.T) {
	b, err := api.Schema(api.SchemaResponse)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, debug := range []bool{false, true} {
		args := []string{"ask", "--json", "对比一下差旅报销和招待报销的流程差异"}
		if debug {
			args = []string{"ask", "--json", "--debug", "对比一下差旅报销和招待报销的流程差异"}
		}
		out, errs, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(v); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		rec, has := v["debug"].(map[string]any)
		if has != debug || debug && rec["decision"] == nil {
			t.Errorf("%v: debug record %v", args, v["debug"])
		}
		if v["version"] != api.Version {
			t.Errorf("%v: version %v", args, v["version"])
		}
	}
}
