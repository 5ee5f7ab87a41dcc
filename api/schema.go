package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/invopop/jsonschema"
)

// Names of the documents Schema returns, one per body of the wire format.
const (
	SchemaResponse      = "response"
	SchemaAskRequest    = "ask_request"
	SchemaSearchRequest = "search_request"
	SchemaError         = "error"
	SchemaLimits        = "limits"
	SchemaNodeEvent     = "node_event"
	SchemaTokenEvent    = "token_event"
)

// SchemaNames lists the names Schema accepts, SchemaResponse first.
var SchemaNames = []string{SchemaResponse, SchemaAskRequest, SchemaSearchRequest, SchemaError, SchemaLimits, SchemaNodeEvent, SchemaTokenEvent}

var rootTypes = map[string]reflect.Type{
	SchemaResponse:      reflect.TypeFor[Response](),
	SchemaAskRequest:    reflect.TypeFor[AskRequest](),
	SchemaSearchRequest: reflect.TypeFor[SearchRequest](),
	SchemaError:         reflect.TypeFor[ErrorBody](),
	SchemaLimits:        reflect.TypeFor[Limits](),
	SchemaNodeEvent:     reflect.TypeFor[NodeEvent](),
	SchemaTokenEvent:    reflect.TypeFor[TokenEvent](),
}

// Schema returns the JSON Schema (draft 2020-12) of one body of v1, by
// name (SchemaNames): a document whose root refers to that body's
// definition, with the definitions of every v1 type in $defs. Objects
// admit no properties beyond those listed, except Response.Debug, which is
// any object. The result is generated afresh at each call.
func Schema(name string) ([]byte, error) {
	root, ok := rootTypes[name]
	if !ok {
		return nil, fmt.Errorf("api: no schema %q (want one of %v)", name, SchemaNames)
	}
	r := &jsonschema.Reflector{Mapper: enums}
	defs := jsonschema.Definitions{}
	for _, n := range SchemaNames {
		s := r.ReflectFromType(rootTypes[n])
		for k, d := range s.Definitions {
			defs[k] = d
		}
	}
	doc := &jsonschema.Schema{
		Version:     jsonschema.Version,
		Ref:         "#/$defs/" + root.Name(),
		Title:       "adaptrag " + Version + " " + name,
		Definitions: defs,
	}
	return json.MarshalIndent(doc, "", "  ")
}

// enums gives the closed string types their values.
func enums(t reflect.Type) *jsonschema.Schema {
	var vals []string
	switch t {
	case reflect.TypeFor[AnsweredBy]():
		vals = strs(AnsweredByValues)
	case reflect.TypeFor[Status]():
		vals = strs(StatusValues)
	case reflect.TypeFor[WarningKind]():
		vals = strs(WarningKindValues)
	default:
		return nil
	}
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range slices.Sorted(slices.Values(vals)) {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
