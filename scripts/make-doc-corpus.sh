#!/usr/bin/env bash
# Regenerates the PDF and DOCX files of ingest/testdata/docs from the HTML
# and Markdown sources in ingest/testdata/docs/src. go test needs neither
# Chromium nor pandoc: the generated files are committed. Needs Debian's
# chromium (scripts/install-chromium.sh --fonts, for the CJK fonts) and
# pandoc (apt-get install pandoc).
#   scripts/make-doc-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/../ingest/testdata/docs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pdf() { # pdf SOURCE.html OUT.pdf [extra chromium flags]
  local src=$1 out=$2; shift 2
  chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
    --user-data-dir="$tmp/profile" "$@" \
    --print-to-pdf="$out" "file://$PWD/$src" 2>/dev/null
}

# With a document outline (bookmarks from h1-h3): headings come from it.
pdf src/passenger-guide.html passenger-guide.pdf --generate-pdf-document-outline
# Without an outline, two columns on page 1: headings come from font size.
pdf src/timetable.html timetable.pdf

# A scanned page: text only as a picture, no text layer.
cat >"$tmp/notice.html" <<'HTML'
<html><body style="margin:0;font:28px serif;padding:30px">Notice to passengers:<br>the Willow Island pier is closed for repairs.</body></html>
HTML
chromium --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile" \
  --window-size=700,160 --screenshot="$tmp/notice.png" "file://$tmp/notice.html" 2>/dev/null
printf '<html><body style="margin:0"><img src="data:image/png;base64,%s" style="width:100%%"></body></html>' \
  "$(base64 -w0 "$tmp/notice.png")" >"$tmp/scan.html"
chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --user-data-dir="$tmp/profile" \
  --print-to-pdf=scanned-notice.pdf "file://$tmp/scan.html" 2>/dev/null

# A partly scanned file: pages 1 and 3 have text, page 2 only the picture
# of the notice above (no text layer).
{
  printf '<html><body style="margin:0;font:16px serif">'
  printf '<div style="break-after:page;padding:40px"><h1>Ferry notices</h1><p>Boats leave the harbour every hour from seven in the morning.</p></div>'
  printf '<div style="break-after:page"><img src="data:image/png;base64,%s" style="width:100%%"></div>' "$(base64 -w0 "$tmp/notice.png")"
  printf '<div style="padding:40px"><h1>Winter timetable</h1><p>From November the last boat leaves at nine in the evening.</p></div>'
  printf '</body></html>'
} >"$tmp/mixed.html"
chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --user-data-dir="$tmp/profile" \
  --print-to-pdf=partly-scanned.pdf "file://$tmp/mixed.html" 2>/dev/null

# Word files from Markdown.
for md in src/crew-handbook.md src/lost-property.md; do
  pandoc --from=markdown --to=docx -o "$(basename "${md%.md}").docx" "$md"
done
ls -l ./*.pdf ./*.docx
