package feature

import (
	"strings"
	"testing"
)

var (
	zhText = strings.Repeat("员工因公出差须提前在 OA 提交《出差申请单》，由直属上级审批；出差超过 7 天或前往境外的，还需部门负责人审批。", 5)
	enText = strings.Repeat("Claims are submitted in the OA system and approved according to the amount of a single claim, tax included. ", 3)
)

func BenchmarkExtractZH(b *testing.B) {
	q := Prepare("报销超过五千元需要谁审批？")
	var s Scratch
	for b.Loop() {
		q.Extract(&s, false, "title", zhText)
	}
}

func BenchmarkExtractEN(b *testing.B) {
	q := Prepare("Who approves an expense claim above 5,000 yuan?")
	var s Scratch
	for b.Loop() {
		q.Extract(&s, false, "title", enText)
	}
}

func BenchmarkPrepare(b *testing.B) {
	for b.Loop() {
		Prepare("Who approves an expense claim above 5,000 yuan?")
	}
}
