package service

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func tenantServer(t *testing.T) *server {
	t.Helper()
	return newServer(t, Config{Pipeline: tenantParts(t).pipeline(t), Keys: []Key{keyAcme, keyGlobex}})
}

func TestAuthRequired(t *testing.T) {
	s := tenantServer(t)
	q := map[string]any{"question": "How many days of annual leave do employees get?"}
	for name, c := range map[string]call{
		"no key":       {path: "/v1/ask", body: q},
		"wrong key":    {path: "/v1/ask", body: q, key: "not-a-key-0123456789abcdef"},
		"key prefix":   {path: "/v1/ask", body: q, key: keyAcme.Key[:len(keyAcme.Key)-1]},
		"basic scheme": {path: "/v1/ask", body: q, header: map[string]string{"Authorization": "Basic " + keyAcme.Key}},
		"empty bearer": {path: "/v1/ask", body: q, header: map[string]string{"Authorization": "Bearer "}},
		"search":       {path: "/v1/search", body: map[string]any{"query": "leave"}},
		"graph":        {method: "GET", path: "/v1/graph"},
		"stream":       {path: "/v1/ask", body: q, header: sse},
	} {
		t.Run(name, func(t *testing.T) {
			resp := s.do(t, c)
			if resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("no WWW-Authenticate")
			}
			wantError(t, resp, 401, CodeUnauthorized)
		})
	}
	// Probes, metrics and the page need no key.
	for _, path := range []string{"/healthz", "/readyz", "/", "/ui/config.json"} {
		resp := s.do(t, call{method: "GET", path: path})
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, keyAcme.Key) || strings.Contains(logs, "not-a-key") {
		t.Error("a key reached the log")
	}
}

// A key's tenant and actor are the request's; a body naming others is
// refused, not obeyed.
func TestTenantComesFromTheKey(t *testing.T) {
	s := tenantServer(t)
	q := "How many days of annual leave do employees get?"
	var res result
	wantOK(t, s.do(t, call{path: "/v1/ask", key: keyAcme.Key, body: map[string]any{"question": q}}), &res)
	if res.Query.Scope.Tenant != "acme" || res.Query.Scope.Actor != "alice" {
		t.Errorf("scope %+v, want acme/alice", res.Query.Scope)
	}
	for _, body := range []map[string]any{
		{"question": q, "tenant": "globex"},
		{"question": q, "tenant": ""},
		{"question": q, "actor": "bob"},
	} {
		resp := s.do(t, call{path: "/v1/ask", key: keyAcme.Key, body: body})
		wantError(t, resp, 403, CodeForbiddenTenant)
		resp = s.do(t, call{path: "/v1/search", key: keyAcme.Key, body: map[string]any{"query": q, "tenant": body["tenant"], "actor": body["actor"]}})
		wantError(t, resp, 403, CodeForbiddenTenant)
	}
	// Naming one's own tenant is harmless.
	wantOK(t, s.do(t, call{path: "/v1/ask", key: keyAcme.Key, body: map[string]any{"question": q, "tenant": "acme", "actor": "alice"}}), &res)
}

// Tenant isolation: a key for one tenant never sees the other's documents,
// through asks, streams, searches or run diagrams.
func TestTenantIsolation(t *testing.T) {
	s := tenantServer(t)
	q := "How many days of annual leave do employees get? What is the reference?"
	for _, tc := range []struct {
		key          Key
		mine, theirs string
	}{{keyAcme, acmeSecret, globexSecret}, {keyGlobex, globexSecret, acmeSecret}} {
		t.Run(tc.key.Tenant, func(t *testing.T) {
			resp := s.do(t, call{path: "/v1/ask", key: tc.key.Key, body: map[string]any{"question": q}})
			var res result
			wantOK(t, resp, &res)
			all := fmt.Sprint(res.Docs, res.Answer)
			if !strings.Contains(all, tc.mine) || strings.Contains(all, tc.theirs) {
				t.Errorf("%s sees its own %v, the other's %v:\n%s", tc.key.Tenant, strings.Contains(all, tc.mine), strings.Contains(all, tc.theirs), all)
			}
			for _, ev := range allEvents(t, s.do(t, call{path: "/v1/ask", key: tc.key.Key, body: map[string]any{"question": q}, header: sse})) {
				if strings.Contains(string(ev.data), tc.theirs) {
					t.Errorf("stream event %s shows the other tenant's document", ev.name)
				}
			}
			var found result
			wantOK(t, s.do(t, call{path: "/v1/search", key: tc.key.Key, body: map[string]any{"query": "annual leave reference", "k": 10, "mode": "hybrid"}}), &found)
			if all := fmt.Sprint(found.Docs); !strings.Contains(all, tc.mine) || strings.Contains(all, tc.theirs) {
				t.Errorf("search: %s", all)
			}
			// The other tenant cannot see this run's path.
			other := keyGlobex
			if tc.key == keyGlobex {
				other = keyAcme
			}
			wantError(t, s.do(t, call{method: "GET", path: "/v1/graph?run=" + res.RunID, key: other.Key}), 404, CodeNotFound)
			resp = s.do(t, call{method: "GET", path: "/v1/graph?run=" + res.RunID, key: tc.key.Key})
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("own run's graph: %d", resp.StatusCode)
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	secret := "s3cret-s3cret-s3cret"
	keys, err := ParseKeys([]byte(`[{"key": "` + secret + `", "tenant": "acme", "actor": "alice"}, {"key": "another-long-key-1234", "tenant": ""}]`))
	if err != nil || len(keys) != 2 || keys[0].Tenant != "acme" || keys[1].Tenant != "" {
		t.Fatalf("%+v %v", keys, err)
	}
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("key", slog.Any("key", keys[0]))
	for _, s := range []string{fmt.Sprint(keys[0]), fmt.Sprintf("%v %+v %#v", keys, keys, keys), log.String()} {
		if strings.Contains(s, secret) {
			t.Errorf("a key is printed: %s", s)
		}
	}
	for name, in := range map[string]string{
		"not an array":  `{"key": "` + secret + `"}`,
		"empty":         `[]`,
		"short key":     `[{"key": "short", "tenant": "a"}]`,
		"no tenant":     `[{"key": "` + secret + `"}]`,
		"space in key":  `[{"key": "` + secret + ` x", "tenant": "a"}]`,
		"duplicate":     `[{"key": "` + secret + `", "tenant": "a"}, {"key": "` + secret + `", "tenant": "b"}]`,
		"unknown field": `[{"key": "` + secret + `", "tenant": "a", "tenants": ["b"]}]`,
		"wrong type":    `[{"key": "` + secret + `", "tenant": 7}]`,
		"syntax":        `[{"key": "` + secret + `", "tenant": }]`,
	} {
		_, err := ParseKeys([]byte(in))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
	if _, err := LoadKeys(t.TempDir() + "/missing.json"); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestKeyring(t *testing.T) {
	kr := newKeyring([]Key{keyAcme, keyGlobex})
	if c, ok := kr.lookup(keyGlobex.Key); !ok || c.Tenant != "globex" || c.Actor != "bob" {
		t.Errorf("lookup: %+v %v", c, ok)
	}
	for _, k := range []string{"", keyAcme.Key + "x", strings.ToUpper(keyAcme.Key)} {
		if _, ok := kr.lookup(k); ok {
			t.Errorf("%q matched", k)
		}
	}
	for h, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "Bearer": "", "": ""} {
		if got, _ := bearer(h); got != want {
			t.Errorf("bearer(%q) = %q, want %q", h, got, want)
		}
	}
}
