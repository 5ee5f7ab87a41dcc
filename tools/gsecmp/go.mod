module github.com/adaptrag/adaptrag/tools/gsecmp

go 1.26.0

require (
	github.com/adaptrag/adaptrag v0.0.0
	github.com/go-ego/gse v0.80.3
)

require github.com/vcaesar/cedar v0.20.2 // indirect

replace github.com/adaptrag/adaptrag => ../..
