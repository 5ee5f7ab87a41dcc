package query

import "testing"

func TestLexiconFilesWellFormed(t *testing.T) {
	for _, err := range lexiconErrs {
		t.Error(err)
	}
	for _, class := range []string{"wh", "aux", "lead"} {
		if len(lexSet(class, "en")) == 0 {
			t.Errorf("class %s is empty", class)
		}
	}
}
