package service

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// MinKeyLength is the shortest API key LoadKeys accepts.
const MinKeyLength = 16

// ErrKeyFile reports an API key file that cannot be used.
var ErrKeyFile = errors.New("service: bad key file")

// Key is one API key and the caller it stands for. The tenant and actor of
// every request made with the key come from here, never from the request.
// A Key prints and logs with the key itself redacted.
type Key struct {
	Key    string `json:"key"`
	Tenant string `json:"tenant"` // "" is the default tenant (what ingest writes without --tenant)
	Actor  string `json:"actor"`
}

// String formats the key's caller, never the key.
func (k Key) String() string { return fmt.Sprintf("key{tenant:%q actor:%q}", k.Tenant, k.Actor) }

// GoString is used by %#v; it redacts the key too.
func (k Key) GoString() string { return k.String() }

// LogValue implements slog.LogValuer without the key.
func (k Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("tenant", k.Tenant), slog.String("actor", k.Actor))
}

// LoadKeys reads an API key file: a JSON array of {"key", "tenant",
// "actor"} objects. Every entry must have a key of at least MinKeyLength
// bytes and a "tenant" field ("" naming the default tenant on purpose);
// keys must be unique. Errors name the entry, never the key.
func LoadKeys(path string) ([]Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	return ParseKeys(b)
}

// ParseKeys parses the contents of a key file (see LoadKeys).
func ParseKeys(b []byte) ([]Key, error) {
	var raw []struct {
		Key    string  `json:"key"`
		Tenant *string `json:"tenant"`
		Actor  string  `json:"actor"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: want a JSON array of {\"key\", \"tenant\", \"actor\"}: %v", ErrKeyFile, redactJSONError(err))
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrKeyFile)
	}
	keys := make([]Key, 0, len(raw))
	seen := map[[sha256.Size]byte]int{}
	for i, r := range raw {
		switch {
		case len(r.Key) < MinKeyLength:
			return nil, fmt.Errorf("%w: entry %d: the key is shorter than %d characters", ErrKeyFile, i+1, MinKeyLength)
		case strings.TrimSpace(r.Key) != r.Key || strings.ContainsAny(r.Key, " \t\r\n"):
			return nil, fmt.Errorf("%w: entry %d: the key contains white space", ErrKeyFile, i+1)
		case r.Tenant == nil:
			return nil, fmt.Errorf("%w: entry %d: no \"tenant\" (write \"tenant\": \"\" for the default tenant)", ErrKeyFile, i+1)
		}
		h := sha256.Sum256([]byte(r.Key))
		if j, dup := seen[h]; dup {
			return nil, fmt.Errorf("%w: entries %d and %d have the same key", ErrKeyFile, j, i+1)
		}
		seen[h] = i + 1
		keys = append(keys, Key{Key: r.Key, Tenant: *r.Tenant, Actor: r.Actor})
	}
	return keys, nil
}

// redactJSONError keeps a decoding error's position and kind but not the
// text of a value, which could be a key.
func redactJSONError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Errorf("field %q: want %s", te.Field, te.Type)
	}
	return err
}

// keyring finds the caller of a bearer key. It keeps only the keys' SHA-256
// hashes and compares every one of them in constant time, so neither the
// time taken nor memory dumps tell a key.
type keyring struct {
	hashes  [][sha256.Size]byte
	callers []caller
}

// caller is who a request acts for.
type caller struct {
	Tenant, Actor string
}

func newKeyring(keys []Key) *keyring {
	kr := &keyring{}
	for _, k := range keys {
		kr.hashes = append(kr.hashes, sha256.Sum256([]byte(k.Key)))
		kr.callers = append(kr.callers, caller{Tenant: k.Tenant, Actor: k.Actor})
	}
	return kr
}

// lookup returns the caller of key; it looks at every entry whatever
// matches.
func (kr *keyring) lookup(key string) (caller, bool) {
	h := sha256.Sum256([]byte(key))
	found := -1
	for i := range kr.hashes {
		if subtle.ConstantTimeCompare(h[:], kr.hashes[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return caller{}, false
	}
	return kr.callers[found], true
}

// bearer returns the token of an "Authorization: Bearer TOKEN" header.
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
