package nodes

import "testing"

func TestTextsLang(t *testing.T) {
	tx := Texts{Default: "EN", Langs: map[string]Wording{"pt_BR": {Greeting: "Olá"}, "zh-Hant": {Thanks: "不客氣"}}}.withDefaults()
	d := DefaultTexts()
	for _, tc := range []struct{ code, greeting string }{
		{"en", d.Langs["en"].Greeting},
		{"zh", d.Langs["zh"].Greeting},
		{"zh-Hant", d.Langs["zh"].Greeting}, // an empty field: the base language's built-in wording
		{"pt-br", "Olá"},
		{"pt-PT", d.Langs["en"].Greeting}, // no pt entry: the default language, en
		{"", d.Langs["en"].Greeting},
	} {
		if got := tx.lang(tc.code).Greeting; got != tc.greeting {
			t.Errorf("lang(%q).Greeting = %q, want %q", tc.code, got, tc.greeting)
		}
	}
	if got := tx.lang("zh-hant").Thanks; got != "不客氣" {
		t.Errorf("zh-Hant thanks %q", got)
	}
	if got := tx.lang("pt-BR").NotFound; got != d.Langs["en"].NotFound {
		t.Errorf("a language without built-in wording fills from English: %q", got)
	}
	// The zero Texts behaves as before: en for English, zh for the rest.
	z := Texts{}.withDefaults()
	if z.lang("en").Lead != d.Langs["en"].Lead || z.lang("fr").Lead != d.Langs["zh"].Lead {
		t.Error("zero Texts: en/zh selection changed")
	}
	// A default without an entry falls back to DefaultLang.
	if bad := (Texts{Default: "xx"}).withDefaults(); bad.Default != DefaultLang {
		t.Errorf("default %q, want %q", bad.Default, DefaultLang)
	}
}
