package nodes

import (
	"strings"
	"testing"

	"github.com/adaptrag/adaptrag/retrieval"
	"github.com/adaptrag/adaptrag/retrieval/analysis"
)

// rowHit is a table-row passage as ingestion makes it: the heading path on
// the first line, then the cells.
func rowHit(origin, locator, title, headings, cells string) retrieval.Hit {
	return retrieval.Hit{Score: 0.9, Relevance: 0.9, Chunk: retrieval.Chunk{
		ID: origin + "#" + locator, Title: title, ContentType: retrieval.ContentTableRow,
		Text: headings + "\n" + cells,
		Meta: map[string]string{retrieval.MetaOrigin: origin, retrieval.MetaLocator: locator},
	}}
}

func textHit(origin, title, text string) retrieval.Hit {
	return retrieval.Hit{Score: 0.9, Relevance: 0.9, Chunk: retrieval.Chunk{
		ID: origin + "#" + title, Title: title, ContentType: retrieval.ContentText, Text: title + "\n" + text,
		Meta: map[string]string{retrieval.MetaOrigin: origin, retrieval.MetaLocator: title},
	}}
}

func answer(t *testing.T, q string, docs ...retrieval.Hit) string {
	t.Helper()
	lang := DefaultTexts().withDefaults().lang(langOf(q))
	ans, cites := extractive(newTermMemo(analysis.Default(), defaultTermMemo), q, docs, nil, lang, 3, langOf(q) == "zh", "")
	if len(cites) == 0 {
		t.Fatalf("%q: nothing quoted: %q", q, ans)
	}
	return ans
}

// A table row is quoted whole: the old answer cut it at every ";" and
// kept the key cell alone ("service_code: FRZ-1; [1]"), dropping the
// max_weight_kg cell asked about.
func TestExtractiveQuotesTableRowWhole(t *testing.T) {
	row := "service_code: FRZ-1; service_name: Cold Chain Next Day; transit_days: 1; max_weight_kg: 25; liability_cap_eur: 400"
	ans := answer(t, "What is the maximum weight for the FRZ-1 service?",
		rowHit("services.csv", "row 5", "services", "services", row))
	if !strings.Contains(ans, row+" [1]") {
		t.Errorf("answer %q does not quote the row whole", ans)
	}
}

// A Chinese row is one unit too: the key and the asked-for cell stay
// together.
func TestExtractiveQuotesChineseRow(t *testing.T) {
	row := "学院: 经济学院; 学位类型: 硕士; 每学分学费（元）: 240; 年住宿费（元）: 1500"
	ans := answer(t, "经济学院硕士每学分学费是多少？", rowHit("学费标准.csv", "row 5", "学费标准", "学费标准", row))
	if !strings.Contains(ans, row) {
		t.Errorf("answer %q does not quote the row whole", ans)
	}
}

// A long row is quoted as its key and the cells the question names, each
// with its header; never a lone cell without the key.
func TestExtractiveLongRowKeepsKeyAndAskedCells(t *testing.T) {
	cells := []string{"shipment_id: SH-40219", "account_id: AC-4471", "service_code: ECO-5", "origin_depot: Ossery",
		"destination_zone: Z2", "weight_kg: 15.0", "charge_eur: 21.30", "status: Delivered", "shipped_on: 2026-03-14",
		"notes: left with the neighbour at number 12 because nobody answered the door on the first attempt, photo taken",
		"signature: illegible, driver noted a blue door and a gate that must be kept closed because of the dog"}
	row := strings.Join(cells, "; ")
	if len([]rune(row)) <= maxWholeRow {
		t.Fatalf("test row too short (%d)", len([]rune(row)))
	}
	ans := answer(t, "What is the status of shipment SH-40219?", rowHit("shipments.csv", "row 10", "shipments", "shipments", row))
	if !strings.Contains(ans, "shipment_id: SH-40219; status: Delivered [1]") {
		t.Errorf("answer %q: want the key and the status cell together", ans)
	}
	if strings.Contains(ans, "signature") {
		t.Errorf("answer %q quotes cells nobody asked about", ans)
	}
}

// A section that matches the question only through its heading (the code
// asked about is the heading, not in the text) is quoted, not "not found".
func TestExtractiveQuotesSectionMatchedByHeading(t *testing.T) {
	ex14 := textHit("tracking_exceptions.md", "Tracking Exception Codes > EX-14 Address not found",
		"The driver could not find the delivery address. The parcel is held at the nearest depot for 5 working days.")
	ex22 := textHit("tracking_exceptions.md", "Tracking Exception Codes > EX-22 Recipient refused",
		"The parcel goes back to the sender on the next trunk run.")
	ans := answer(t, "What does EX-14 mean?", ex14, ex22)
	if !strings.Contains(ans, "The driver could not find the delivery address. [1]") {
		t.Errorf("answer %q does not quote the EX-14 section", ans)
	}
	if strings.Contains(ans, "trunk run") {
		t.Errorf("answer %q quotes the EX-22 section, which the question does not name", ans)
	}
}

// A Markdown table kept inside a text passage (stored before tables were
// rows) never gives its header or delimiter line as the answer.
func TestExtractiveNeverQuotesHeaderRow(t *testing.T) {
	text := "The size class sets the base price.\n\n| Size class | Max length (cm) | Base price (EUR) |\n|---|---|---|\n| M | 60 | 9.50 |"
	ans := answer(t, "What is the base price of size class M?", textHit("service_guide.md", "Guide > Parcel size classes", text))
	if strings.Contains(ans, "| Size class |") || strings.Contains(ans, "---") {
		t.Errorf("answer %q quotes the header row", ans)
	}
	if !strings.Contains(ans, "9.50") {
		t.Errorf("answer %q lacks the data row", ans)
	}
}

// Of a table's rows, the one named by the id in the question is quoted;
// a sibling row sharing the header words is not ("LUM-507" was answered
// with the LUM-720 row's code too).
func TestExtractiveQuotesTheNamedRow(t *testing.T) {
	named := "shipment_id: SH-40217; service_code: FRZ-1; status: Damaged; shipped_on: 2026-03-09"
	other := "shipment_id: SH-40216; service_code: EXP-NEXT; status: Delivered; shipped_on: 2026-03-05"
	ans := answer(t, "What is the status of shipment SH-40217?",
		rowHit("shipments.csv", "row 7", "shipments", "shipments", other),
		rowHit("shipments.csv", "row 8", "shipments", "shipments", named))
	if !strings.Contains(ans, named+" [2]") || strings.Contains(ans, "SH-40216") {
		t.Errorf("answer %q: want the SH-40217 row alone", ans)
	}
}

// A one-word query that only a heading holds ("retention" for the section
// "Data retention", whose text says "kept") is answered from that section.
func TestExtractiveKeywordMatchedByHeading(t *testing.T) {
	ans := answer(t, "retention", textHit("tariff_guide.md", "Tariff Guide > Meter data retention",
		"Meter readings are kept for seven years. Older readings are deleted every January."))
	if !strings.Contains(ans, "Meter readings are kept for seven years. [1]") {
		t.Errorf("answer %q", ans)
	}
}

// The record the user named is quoted even when the query was rewritten
// for the next step of a chain: "选课记录 EN-30112 的状态是什么？" searched
// with the course's words quoted the course rows and left out the
// EN-30112 row holding 状态: 需补考.
func TestExtractiveQuotesTheAskedRecordAfterARewrite(t *testing.T) {
	record := rowHit("选课记录.csv", "row 3", "选课记录 EN-30112", "选课记录",
		"记录号: EN-30112; 学号: S2024013; 课程代码: MA-105; 学期: 2025秋; 成绩: 52; 状态: 需补考")
	course := rowHit("课程.csv", "row 4", "课程 MA-105", "课程",
		"课程代码: MA-105; 课程名称: 高等数学A; 学分: 5; 开课学院: 数学学院; 课程类型: 公共必修")
	lang := DefaultTexts().withDefaults().lang("zh")
	ans, _ := extractive(newTermMemo(analysis.Default(), defaultTermMemo), "MA-105 数学学院 高等数学A 公共必修 的状态是什么？", []retrieval.Hit{record, course}, nil, lang, 3, true,
		"选课记录EN-30112的状态是什么？")
	if !strings.Contains(ans, "状态: 需补考 [1]") {
		t.Errorf("answer %q leaves out the record asked about", ans)
	}
}

func TestRecordIDs(t *testing.T) {
	got := strings.Join(recordIDs("选课记录EN-30112的状态，病历号 HZ-3307 和 Z5 区、2026 年、Team 套餐"), ",")
	if got != "en-30112,hz-3307,z5" {
		t.Errorf("recordIDs = %q", got)
	}
}
