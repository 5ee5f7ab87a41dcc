package ingest_test

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/ingest"
	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/samplekb"
)

func loadSampleKB(t *testing.T) []retrieval.Chunk {
	t.Helper()
	chunks, rep, err := ingest.LoadFS(context.Background(), samplekb.FS(), ingest.Options{})
	if err != nil || rep.Err() != nil || len(rep.Skipped) != 0 {
		t.Fatalf("LoadFS(samplekb): err %v, file errors %v, skipped %v", err, rep.Err(), rep.Skipped)
	}
	return chunks
}

func TestSampleKBIngests(t *testing.T) {
	docs, faqStore := newMemStore(16), newMemStore(16)
	rep, err := ingest.IngestFS(context.Background(), ingest.Target{Docs: docs, FAQ: faqStore}, samplekb.FS(),
		ingest.Options{Tenant: "demo", Embedder: &hashEmbedder{dim: 16}})
	if err != nil || rep.Err() != nil {
		t.Fatalf("IngestFS: %v %v", err, rep.Err())
	}
	chunks := docs.all()
	if len(chunks) != rep.Chunks {
		t.Fatalf("stored %d chunks, report says %d (duplicate ids?)", len(chunks), rep.Chunks)
	}
	sources := map[string]bool{}
	types := map[string]bool{}
	for _, c := range chunks {
		sources[c.Source] = true
		types[c.ContentType] = true
		origin := c.Meta[retrieval.MetaOrigin]
		if strings.TrimSpace(c.Text) == "" || c.Title == "" || len(c.Vector) != 16 || origin == "" {
			t.Errorf("chunk %s of %s: empty text, title or origin, or no vector", c.ID, origin)
		}
		if n := len([]rune(c.Text)); n > ingest.DefaultChunkSize {
			t.Errorf("chunk of %s has %d runes", origin, n)
		}
	}
	if got := slices.Sorted(maps.Keys(sources)); !slices.Equal(got, samplekb.Sources) {
		t.Errorf("sources = %v, want %v", got, samplekb.Sources)
	}
	for _, ct := range []string{retrieval.ContentText, retrieval.ContentTableRow} {
		if !types[ct] {
			t.Errorf("no %s chunk", ct)
		}
	}
	if types[retrieval.ContentFAQ] {
		t.Error("FAQ entries among the documents")
	}
	faq, err := samplekb.FAQ()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(faqStore.all()); n != len(faq) || rep.FAQEntries != n || rep.FAQFiles != 1 {
		t.Errorf("%d FAQ chunks (report: %d in %d files) for %d FAQ entries", n, rep.FAQEntries, rep.FAQFiles, len(faq))
	}
}

// TestSampleKBHoldsTheAnswers checks that the facts the reference questions
// ask for are present in at least one document chunk (FAQ entries do not
// count: the documents must hold the answer too).
func TestSampleKBHoldsTheAnswers(t *testing.T) {
	var docs []retrieval.Chunk
	for _, c := range loadSampleKB(t) {
		if c.ContentType != retrieval.ContentFAQ {
			docs = append(docs, c)
		}
	}
	tests := []struct {
		question string
		source   string
		all      []string       // every term must be in one chunk
		re       *regexp.Regexp // and this must match it, when set
	}{
		{"退货要在几天内发起？", "after_sales", []string{"退货", "签收"}, regexp.MustCompile(`7 ?天内`)},
		{"P-204 质量问题退货运费", "after_sales", []string{"P-204", "运费", "承担"}, regexp.MustCompile(`30 ?天`)},
		{"退货多久到账", "after_sales", []string{"退款", "到账", "工作日"}, nil},
		{"跨境电商退货遇到清关卡住怎么办", "after_sales", []string{"清关", "跨境"}, nil},
		{"电子发票多久能开好", "finance", []string{"电子", "发票"}, regexp.MustCompile(`3 ?个工作日`)},
		{"报销费用超过5000需要谁审批", "finance", []string{"5000", "财务总监", "部门负责人"}, nil},
		{"差旅报销流程", "finance", []string{"差旅报销", "出差申请", "直属上级"}, nil},
		{"招待报销流程", "finance", []string{"招待", "部门负责人", "财务 BP"}, nil},
		{"材料清单里的付款金额字段是什么", "finance", []string{"付款金额", "发票"}, nil},
		{"公司会议室预约规则在哪里查看", "admin", []string{"会议室预约规则", "行政服务"}, nil},
		{"会议室需要遵守哪些流程要求", "admin", []string{"签到", "取消"}, nil},
		{"异地入职材料", "hr", []string{"异地入职", "材料", "身份证"}, nil},
		{"异地入职审批信息", "hr", []string{"异地入职审批单", "属地 HR"}, nil},
		{"年假有几天", "hr", []string{"年假"}, regexp.MustCompile(`5 ?天`)},
		{"VPN 连不上", "it", []string{"VPN", "E305"}, nil},
		{"How do I reset my password?", "it", []string{"password", "self-service portal"}, nil},
		{"How many days do I have to return a product?", "after_sales", []string{"return", "7 days"}, nil},
		{"Who approves a claim above 5,000 yuan?", "finance", []string{"5,000", "finance director"}, nil},
		{"What is the meal allowance in Shanghai?", "finance", []string{"Shanghai", "Meal allowance"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			for _, c := range docs {
				if c.Source != tt.source {
					continue
				}
				ok := true
				for _, term := range tt.all {
					ok = ok && strings.Contains(c.Text, term)
				}
				if ok && (tt.re == nil || tt.re.MatchString(c.Text)) {
					return
				}
			}
			t.Errorf("no %s chunk holds %q (and %v)", tt.source, tt.all, tt.re)
		})
	}
}

// TestSampleKBComparisonSpansChunks checks that the travel-versus-hospitality
// comparison needs several chunks: the two processes are in different
// chunks, each with its own approvers.
func TestSampleKBComparisonSpansChunks(t *testing.T) {
	var travel, hosp []string
	for _, c := range loadSampleKB(t) {
		if c.ContentType == retrieval.ContentFAQ || c.Source != "finance" {
			continue
		}
		if strings.Contains(c.Title, "差旅报销流程") {
			travel = append(travel, c.ID)
		}
		if strings.Contains(c.Title, "招待报销流程") {
			hosp = append(hosp, c.ID)
		}
	}
	if len(travel) == 0 || len(hosp) == 0 {
		t.Fatalf("travel chunks %v, hospitality chunks %v", travel, hosp)
	}
	for _, id := range travel {
		if slices.Contains(hosp, id) {
			t.Errorf("chunk %s mixes both processes", id)
		}
	}
}
