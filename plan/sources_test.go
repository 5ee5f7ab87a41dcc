package plan

import (
	"os"
	"path/filepath"
)

// testSettings carry the bundled sample knowledge base's source table (read
// from its file, since the sample package imports this one), which the
// worked examples and the source-boundary tests are written against.
var testSettings = func() Settings {
	data, err := os.ReadFile(filepath.Join("..", "samplekb", "sources.json"))
	if err != nil {
		panic(err)
	}
	src, err := ParseSources(data)
	if err != nil {
		panic(err)
	}
	return Settings{Sources: src}
}()
