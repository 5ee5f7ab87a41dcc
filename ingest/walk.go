package ingest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds the links followed while resolving one path.
const maxLinkHops = 40

// tree is one ingested folder: a folder argument of Ingest, the folder of
// a file argument, or the file system of IngestFS.
type tree struct {
	fsys    fs.FS
	display string // the folder as the caller named it, "" for a file system
	abs     string // resolved absolute path on disk, "" for a file system
	src     string // source of the files directly in it
	folder  bool   // a walked folder (prunable), not the folder of a file argument
	missing bool   // a folder argument that no longer exists (kept for Prune)
}

// id is the document id of the file at the canonical path rel in t.
func (t *tree) id(rel string) string {
	if t.abs == "" {
		return DocID(rel)
	}
	return FileDocID(filepath.Join(t.abs, filepath.FromSlash(rel)))
}

// show is the path of rel as reported to the caller.
func (t *tree) show(rel string) string {
	if t.display == "" {
		return rel
	}
	return filepath.Join(t.display, filepath.FromSlash(rel))
}

// file is one file to ingest.
type file struct {
	tree    *tree
	open    func() (fs.File, error)
	display string // path reported to the caller
	origin  string // MetaOrigin: path relative to the ingested folder
	id      string // document id
	faq     bool   // read as an FAQ file whatever its content
}

// collector lists the files of a run, once each.
type collector struct {
	o     Options
	rep   *Report
	seen  map[string]bool // document ids listed so far
	faq   map[string]bool // document ids to read as FAQ files
	files []file
	trees []*tree
}

func newCollector(o Options, rep *Report) *collector {
	return &collector{o: o, rep: rep, seen: map[string]bool{}, faq: map[string]bool{}}
}

func (c *collector) fail(display string, err error) {
	c.rep.Errors = append(c.rep.Errors, FileError{Path: display, Err: err})
}

func (c *collector) skip(display, reason string) {
	c.rep.Skipped = append(c.rep.Skipped, Skip{Path: display, Reason: reason})
}

// add lists the file at the canonical path rel of t, unless a link or
// another argument already listed it.
func (c *collector) add(t *tree, rel, display string) {
	c.list(t, rel, display, func() (fs.File, error) { return t.fsys.Open(rel) })
}

// list lists a supported file named rel in t (its origin and document id)
// and opened by open, once.
func (c *collector) list(t *tree, rel, display string, open func() (fs.File, error)) {
	id := t.id(rel)
	if c.seen[id] {
		return
	}
	if !Supported(rel) {
		c.skip(display, "no loader for this file type")
		return
	}
	c.seen[id] = true
	c.files = append(c.files, file{tree: t, display: display, origin: rel, id: id, faq: c.faq[id], open: open})
}

// walk lists the files under t in lexical order. Hidden files and folders
// (".name") are left out. A link is resolved inside t: one that stays
// inside counts as the file it leads to (so it adds no duplicate), one
// that leads outside is an error matching ErrOutsideRoot unless
// Options.FollowSymlinks is set, and folders behind links are not walked.
func (c *collector) walk(t *tree) {
	c.trees = append(c.trees, t)
	err := fs.WalkDir(t.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			c.fail(t.show(p), err)
			return nil
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch mode := d.Type(); {
		case d.IsDir():
		case mode.IsRegular():
			c.add(t, p, t.show(p))
		case mode&fs.ModeSymlink != 0:
			c.link(t, p)
		default:
			c.skip(t.show(p), "not a regular file")
		}
		return nil
	})
	if err != nil { // only a root that cannot be read at all
		c.fail(cmp.Or(t.display, "."), err)
	}
}

// link lists the file behind the link at p in t.
func (c *collector) link(t *tree, p string) {
	display := t.show(p)
	rel, err := resolveIn(t.fsys, p, t.abs)
	open := func() (fs.File, error) { return t.fsys.Open(rel) }
	switch {
	case err == nil:
	case errors.Is(err, ErrOutsideRoot) && c.o.FollowSymlinks:
		// The link's own path names the document, so that pruning
		// finds it under this folder.
		rel = p
		open = func() (fs.File, error) { return t.fsys.Open(p) }
		if t.abs != "" {
			open = func() (fs.File, error) { return os.Open(filepath.Join(t.abs, filepath.FromSlash(p))) }
		}
	default:
		c.fail(display, err)
		return
	}
	f, err := open()
	if err != nil {
		c.fail(display, err)
		return
	}
	info, err := f.Stat()
	f.Close()
	switch {
	case err != nil:
		c.fail(display, err)
	case info.IsDir():
		c.skip(display, "link to a folder (folders behind links are not walked)")
	case !info.Mode().IsRegular():
		c.skip(display, "not a regular file")
	default:
		c.list(t, rel, display, open)
	}
}

// resolveIn returns the path inside fsys that name leads to once every
// link on the way is followed, or an error matching ErrOutsideRoot when a
// link leads outside fsys. abs is the resolved absolute path of fsys on
// disk ("" for other file systems), which lets absolute links that lead
// back inside resolve. A file system that cannot read links counts every
// link as leading outside.
func resolveIn(fsys fs.FS, name, abs string) (string, error) {
	rl, ok := fsys.(fs.ReadLinkFS)
	if !ok {
		return "", fmt.Errorf("%w: this file system cannot read links", ErrOutsideRoot)
	}
	todo := strings.Split(name, "/")
	var done []string
	for hops := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", fmt.Errorf("%w: %s leads above the folder", ErrOutsideRoot, name)
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(path.Join(done...), part)
		info, err := rl.Lstat(cur)
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, part)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s: more than %d links", name, maxLinkHops)
		}
		target, err := rl.ReadLink(cur)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) || path.IsAbs(target) {
			rel, ok := inside(abs, target)
			if !ok {
				return "", fmt.Errorf("%w: %s links to %s", ErrOutsideRoot, cur, target)
			}
			done, target = nil, rel
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return path.Join(done...), nil
}

// inside returns target relative to the folder abs when it lies in it,
// after resolving target's own links.
func inside(abs, target string) (string, bool) {
	if abs == "" {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(target); err == nil {
		target = real
	}
	rel, err := filepath.Rel(abs, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// disk lists the files of the paths of Ingest, each folder walked and each
// file taken as it is, and the files of Options.FAQFiles. It returns a
// function that releases the folders.
func (c *collector) disk(paths []string) (release func()) {
	var roots []*os.Root
	release = func() {
		for _, r := range roots {
			r.Close()
		}
	}
	for _, p := range c.o.FAQFiles {
		if real, err := resolvePath(p); err == nil {
			c.faq[FileDocID(real)] = true
		}
	}
	for _, p := range append(paths[:len(paths):len(paths)], c.o.FAQFiles...) {
		real, err := resolvePath(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && c.o.Prune && c.gone(p) {
				continue // pruned, or reported by prune
			}
			c.fail(p, err)
			continue
		}
		st, err := os.Stat(real)
		if err != nil {
			c.fail(p, err)
			continue
		}
		dir, name := real, ""
		if !st.IsDir() {
			dir, name = filepath.Dir(real), filepath.Base(real)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			c.fail(p, err)
			continue
		}
		roots = append(roots, root)
		if name == "" {
			c.walk(&tree{fsys: root.FS(), display: p, abs: real, src: rootName(p), folder: true})
			continue
		}
		t := &tree{fsys: root.FS(), display: filepath.Dir(p), abs: dir, src: rootName(filepath.Dir(p))}
		if id := t.id(name); !c.seen[id] {
			// Named explicitly: listed whatever its extension, so that an
			// unsupported type is reported as an error.
			c.seen[id] = true
			c.files = append(c.files, file{tree: t, display: p, origin: name, id: id, faq: c.faq[id],
				open: func() (fs.File, error) { return root.Open(name) }})
		}
	}
	return release
}

// gone records a folder argument that no longer exists as a tree without
// files, so that Prune removes what was ingested from it; Prune reports
// the missing path if nothing was.
func (c *collector) gone(p string) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	// Resolve what is left of the path, so that ids match.
	dir, base := filepath.Split(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		abs = filepath.Join(real, base)
	}
	c.trees = append(c.trees, &tree{display: p, abs: abs, folder: true, missing: true})
	return true
}

// resolvePath returns the absolute path p leads to, links resolved.
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// rootName is the base name of a folder, resolving "." and "..".
func rootName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	b := filepath.Base(dir)
	if b == string(filepath.Separator) || b == "." {
		return ""
	}
	return b
}
