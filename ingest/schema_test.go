package ingest

import (
	"errors"
	"strings"
	"testing"
)

func table(header string, rows ...string) Table {
	t := Table{Header: strings.Split(header, ",")}
	for _, r := range rows {
		t.Rows = append(t.Rows, Row{Cells: strings.Split(r, ",")})
	}
	return t
}

func TestInferSchemaRoles(t *testing.T) {
	orders := table("order_id,owner,product,status,order_date,amount (CNY),refund,note",
		"A100,u1,P-204,delivered,2026-11-20,199,0,first order",
		"A101,u1,P-205,delivered,2026-11-28,129,¥0,gift wrap please",
		"A102,u2,P-204,returned,2026-12-02,199,199,broken on arrival",
		"A103,u3,P-204,refunded,2026/12/5,199,¥199,late")
	orders.Name = "orders"
	s := InferSchema(orders)
	want := map[string]Role{"order_id": RoleKey, "owner": RoleCategory, "product": RoleCategory, "status": RoleCategory,
		"order_date": RoleDate, "amount (CNY)": RoleNumber, "refund": RoleNumber, "note": RoleText}
	for col, role := range want {
		if c := s.Column(col); c == nil || c.Role != role {
			t.Errorf("%s: role %v, want %s", col, c, role)
		}
	}
	if s.Key != "order_id" || s.Owner != "" || s.Tenant != "" {
		t.Errorf("key %q owner %q tenant %q: want order_id and no owner or tenant (never inferred)", s.Key, s.Owner, s.Tenant)
	}
	if u := s.Column("amount (CNY)").Unit; u != "CNY" {
		t.Errorf("unit from header: %q", u)
	}
	if u := s.Column("refund").Unit; u != "" {
		t.Errorf("refund has cells with and without ¥: unit %q, want none", u)
	}
	if c := s.Column("refund"); !c.Sum || c.Filter {
		t.Errorf("refund: sum %v filter %v", c.Sum, c.Filter)
	}
	if c := s.Column("product"); !c.Filter || strings.Join(c.Values, " ") != "P-204 P-205" {
		t.Errorf("product: filter %v values %v", c.Filter, c.Values)
	}
}

func TestInferSchemaKeyNeedsUniqueIDs(t *testing.T) {
	s := InferSchema(table("code,meaning", "E1,bad", "E1,worse"))
	if s.Key != "" {
		t.Errorf("repeated codes made key %q", s.Key)
	}
	s = InferSchema(table("id,price", "1,10", "2,10", "3,12"))
	if s.Key != "id" || s.Column("price").Role != RoleNumber {
		t.Errorf("numeric id under an id header: key %q, price %v", s.Key, s.Column("price").Role)
	}
	s = InferSchema(table("name,price", "alpha,10", "beta,11"))
	if s.Key != "" {
		t.Errorf("words are not ids: key %q", s.Key)
	}
	s = InferSchema(table("a,b", "X1,Y1", "X2,Y2"))
	if s.Key != "a" || s.Column("b").Role == RoleKey {
		t.Errorf("one key only: key %q, b %s", s.Key, s.Column("b").Role)
	}
}

func TestParseNumberAndDate(t *testing.T) {
	for in, want := range map[string]float64{"1,299.50": 1299.5, "¥120": 120, "30 days": 30, "-4": -4, "12%": 12} {
		if v, _, ok := ParseNumber(in); !ok || v != want {
			t.Errorf("ParseNumber(%q) = %v %v", in, v, ok)
		}
	}
	for _, in := range []string{"A100", "P-204", "1.2.3", "", "12 34"} {
		if _, _, ok := ParseNumber(in); ok {
			t.Errorf("ParseNumber(%q) took it for a number", in)
		}
	}
	for _, in := range []string{"2026-03-05", "2026/3/5", "2026年3月5日", "2026-03-05T10:00:00Z"} {
		if d, ok := ParseDate(in); !ok || d.Format("2006-01-02") != "2026-03-05" {
			t.Errorf("ParseDate(%q) = %v %v", in, d, ok)
		}
	}
	if _, ok := ParseDate("2026-13-40"); ok {
		t.Error("an impossible date parsed")
	}
}

func TestDeclareAndRelate(t *testing.T) {
	orders := InferSchema(table("order_id,owner,product,refund", "A100,u1,P-204,0", "A101,u2,P-205,5", "A102,u2,P-204,1"))
	orders.Table = "order"
	d, err := ParseSchema(strings.NewReader(`{"table":"order","aliases":["订单"],"owner":"owner","columns":[{"name":"refund","unit":"CNY","aliases":["退款"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	orders, err = Declare(orders, d)
	if err != nil {
		t.Fatal(err)
	}
	if orders.Owner != "owner" || orders.Column("refund").Unit != "CNY" || orders.Column("owner").Filter {
		t.Errorf("declared: %+v", orders)
	}
	products := InferSchema(table("product_id,name", "P-204,battery", "P-205,charger", "P-208,car charger"))
	products.Table = "product"
	all := []TableSchema{orders, products}
	Relate(all)
	if len(all[0].Relations) != 1 || all[0].Relations[0] != (Relation{Column: "product", Table: "product"}) {
		t.Errorf("relations of order: %+v", all[0].Relations)
	}
	if len(all[1].Relations) != 0 {
		t.Errorf("relations of product: %+v", all[1].Relations)
	}
	for _, bad := range []string{`{"table":"x","ownr":"owner"}`, `{"table":"x"} {}`, `not json`} {
		if _, err := ParseSchema(strings.NewReader(bad)); !errors.Is(err, ErrSchema) {
			t.Errorf("ParseSchema(%s) = %v", bad, err)
		}
	}
	if _, err := Declare(products, TableSchema{Owner: "nobody"}); !errors.Is(err, ErrSchema) {
		t.Errorf("an owner column the table lacks: %v", err)
	}
	if _, err := Declare(products, TableSchema{Columns: []ColumnSchema{{Name: "name", Role: "weird"}}}); !errors.Is(err, ErrSchema) {
		t.Errorf("an unknown role: %v", err)
	}
	if SchemaSidecar("a/orders.csv") != "a/orders.schema.json" {
		t.Error(SchemaSidecar("a/orders.csv"))
	}
}
