package samplekb

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFAQ(t *testing.T) {
	good := `{"id":"a","question":"q?","answer":"x","source":"hr","lang":"en"}`
	tests := []struct {
		name  string
		in    string
		n     int
		isBad bool
	}{
		{"one", good, 1, false},
		{"blank lines", "\n" + good + "\n\n" + good + "\n", 2, false},
		{"empty", "", 0, false},
		{"not json", good + "\n{oops", 0, true},
		{"missing answer", `{"id":"a","question":"q?","source":"hr"}`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFAQ([]byte(tt.in))
			if tt.isBad {
				if !errors.Is(err, ErrBadFAQ) {
					t.Fatalf("err = %v, want ErrBadFAQ", err)
				}
				if tt.name == "not json" && !strings.Contains(err.Error(), "line 2") {
					t.Errorf("error %q does not name line 2", err)
				}
				return
			}
			if err != nil || len(got) != tt.n {
				t.Fatalf("got %d entries, err %v; want %d", len(got), err, tt.n)
			}
		})
	}
}
