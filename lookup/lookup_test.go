package lookup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/adaptrag/adaptrag/lookup"
	"github.com/adaptrag/adaptrag/retrieval"
)

const orders = `order_id,owner,product,order_date,refund,tenant
A1,u1,P-1,2026-03-02,10,
A2,u1,P-1,2026-03-20,5,
A3,u2,P-1,2026-03-21,7,
A4,u1,P-2,2026-03-22,100,
A5,u1,P-1,2026-02-27,1,
B1,u1,P-1,2026-03-05,1000,acme
`

func store(t *testing.T) *lookup.Store {
	t.Helper()
	tb, err := lookup.LoadCSV(strings.NewReader(orders), lookup.TableOptions{
		Kind: "order", Aliases: []string{"订单", "order", "orders"}, Key: "order_id", Owner: "owner", Tenant: "tenant", Date: "order_date",
		Fields: map[string][]string{"refund": {"退款", "refund"}}, Origin: "orders.csv",
	})
	if err != nil {
		t.Fatal(err)
	}
	return lookup.New(func() time.Time { return time.Date(2026, 3, 25, 0, 0, 0, 0, time.UTC) }, tb)
}

func TestGet(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	r, err := s.Get(ctx, retrieval.Scope{}, "u1", "order", "A1")
	if err != nil || r.Fields["product"] != "P-1" || r.Origin != "orders.csv" || r.Locator != "row 2" {
		t.Fatalf("A1: %+v, %v", r, err)
	}
	r.Fields["product"] = "changed"
	if again, _ := s.Get(ctx, retrieval.Scope{}, "u1", "order", "A1"); again.Fields["product"] != "P-1" {
		t.Error("a caller's edit reached the table")
	}
	for _, tt := range []struct {
		scope     retrieval.Scope
		actor, id string
		want      error
	}{
		{retrieval.Scope{}, "u2", "A1", retrieval.ErrNotPermitted},
		{retrieval.Scope{}, "", "A1", retrieval.ErrNotPermitted},
		{retrieval.Scope{}, "u1", "Z9", retrieval.ErrNotFound},
		{retrieval.Scope{}, "u1", "B1", retrieval.ErrNotFound},               // another tenant's row
		{retrieval.Scope{Tenant: "acme"}, "u1", "A1", retrieval.ErrNotFound}, // and the reverse
	} {
		if _, err := s.Get(ctx, tt.scope, tt.actor, "order", tt.id); !errors.Is(err, tt.want) {
			t.Errorf("%s as %q in %q: err = %v, want %v", tt.id, tt.actor, tt.scope.Tenant, err, tt.want)
		}
	}
	if _, err := s.Get(ctx, retrieval.Scope{Tenant: "acme"}, "u1", "order", "B1"); err != nil {
		t.Errorf("own tenant: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(cctx, retrieval.Scope{}, "u1", "order", "A1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestAggregate(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	for _, tt := range []struct {
		q     string
		actor string
		value float64
		n     int
	}{
		{"这个月所有 P-1 订单的退款总额", "u1", 15, 2},                    // A1 + A2; A3 is u2's, A5 is February
		{"total refund of P-1 orders this month", "u2", 7, 1}, // only u2's own row
		{"how many orders this month", "u1", 3, 3},            // A1, A2, A4
		{"上个月 P-1 订单的退款总额", "u1", 1, 1},
	} {
		a, err := s.Aggregate(ctx, retrieval.Scope{}, tt.actor, tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.q, err)
		}
		if a.Value != tt.value || len(a.Records) != tt.n || a.Query == "" {
			t.Errorf("%s: %v over %d records (%s), want %v over %d", tt.q, a.Value, len(a.Records), a.Query, tt.value, tt.n)
		}
	}
	for _, q := range []string{"订单多久发货", "total of orders"} {
		if _, err := s.Aggregate(ctx, retrieval.Scope{}, "u1", q); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", q, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no key column": "id,x\n1,2\n",
		"empty key":     "order_id,x\n,2\n",
		"duplicate key": "order_id,x\n1,2\n1,3\n",
		"empty":         "",
	} {
		if _, err := lookup.LoadCSV(strings.NewReader(in), lookup.TableOptions{Kind: "order", Key: "order_id"}); !errors.Is(err, lookup.ErrTable) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
