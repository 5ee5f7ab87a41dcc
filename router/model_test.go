package router

import (
	"testing"

	"github.com/adaptrag/adaptrag/router/internal/feat"
)

func TestShippedModel(t *testing.T) {
	if len(modelBlob) > 2<<20 {
		t.Errorf("shipped model is %d bytes, budget 2 MiB", len(modelBlob))
	}
	m, err := feat.Decode(modelBlob)
	if err != nil {
		t.Fatal(err)
	}
	if m.Temperature <= 0 || m.ChitchatMargin < 0 || m.SubstanceMargin < 0 {
		t.Fatalf("calibration parameters %v %v %v", m.Temperature, m.ChitchatMargin, m.SubstanceMargin)
	}
}
