package lookup

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	cnMonthRE  = regexp.MustCompile(`(\d{4})\s*年\s*(\d{1,2})\s*月`)
	isoMonthRE = regexp.MustCompile(`\b(\d{4})-(\d{2})\b`)
	enMonthRE  = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{4})\b`)
	cnYearRE   = regexp.MustCompile(`(\d{4})\s*年`)
	enYearRE   = regexp.MustCompile(`(?i)\b(?:in|during|for|of)\s+(\d{4})\b`)
)

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// namedPeriod finds a month or a year the question names by number.
func namedPeriod(q string) (from, to time.Time, words string, ok bool) {
	month := func(y string, m time.Month) (time.Time, time.Time, string, bool) {
		yr, err := strconv.Atoi(y)
		if err != nil || m < 1 || m > 12 {
			return time.Time{}, time.Time{}, "", false
		}
		f := time.Date(yr, m, 1, 0, 0, 0, 0, time.UTC)
		return f, f.AddDate(0, 1, 0), f.Format("2006-01"), true
	}
	if m := cnMonthRE.FindStringSubmatch(q); m != nil {
		n, _ := strconv.Atoi(m[2])
		return month(m[1], time.Month(n))
	}
	if m := enMonthRE.FindStringSubmatch(q); m != nil {
		return month(m[2], months[strings.ToLower(m[1][:3])])
	}
	if m := isoMonthRE.FindStringSubmatch(q); m != nil && !strings.Contains(q, m[0]+"-") {
		n, _ := strconv.Atoi(m[2])
		return month(m[1], time.Month(n))
	}
	for _, re := range []*regexp.Regexp{cnYearRE, enYearRE} {
		if m := re.FindStringSubmatch(q); m != nil {
			yr, _ := strconv.Atoi(m[1])
			f := time.Date(yr, 1, 1, 0, 0, 0, 0, time.UTC)
			return f, f.AddDate(1, 0, 0), m[1], true
		}
	}
	return time.Time{}, time.Time{}, "", false
}
