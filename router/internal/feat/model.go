package feat

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Classes is the fixed class order of the model's weight rows.
var Classes = [3]string{"factual", "analytical", "chitchat"}

// K is the number of classes.
const K = len(Classes)

// Chitchat is the index of the chitchat class.
const Chitchat = 2

// Model is a multinomial logistic regression over hashed features.
type Model struct {
	Buckets     uint32    // number of hash buckets (a power of two)
	W           []float32 // Buckets*K weights, bucket-major
	Temperature float32   // logits are divided by it before the softmax (calibration)
	// ChitchatMargin is subtracted from the chitchat logit: a deliberate bias
	// against routing a substantive question to "no retrieval".
	ChitchatMargin float32
	// SubstanceMargin is subtracted as well when the query has a
	// substantive part that is not about the assistant (Analysis.Substance).
	SubstanceMargin float32
	// TalkPrecision is the share of chitchat among the training queries
	// that are only small talk (Talk.Only), Laplace-smoothed: the least
	// chitchat probability such a query gets.
	TalkPrecision float32
}

// Gate is what the rules found in a query, for Probs.
type Gate struct {
	Substance bool // Analysis.Substance: the chitchat score takes SubstanceMargin
	Chat      bool // Analysis.Chat: without it chitchat gets probability 0
	Only      bool // Analysis.Talk.Only: chitchat gets at least TalkPrecision
}

// Gate returns the rule findings of an for Model.Probs.
func (an *Analysis) Gate() Gate {
	return Gate{Substance: an.Substance, Chat: an.Chat, Only: an.Talk.Only}
}

// ErrCorrupt reports a model blob that fails to decode or its checksum.
var ErrCorrupt = errors.New("router: corrupt model")

const magic = "ARRM"
const version = 3

// Logits writes the raw class scores of feats into out (len K).
func (m *Model) Logits(feats []uint32, out *[K]float32) {
	*out = [K]float32{}
	mask := m.Buckets - 1
	for _, f := range feats {
		i := int(f&mask) * K
		w := m.W[i : i+K : i+K]
		out[0] += w[0]
		out[1] += w[1]
		out[2] += w[2]
	}
}

// Probs turns feats into calibrated class probabilities, with the rules
// applied:
//
//   - the chitchat margins: ChitchatMargin always, SubstanceMargin for a
//     substantive query;
//   - without evidence of conversation (g.Chat false) chitchat gets
//     probability 0 and the other two classes share the rest: a keyword
//     query is never answered without retrieval;
//   - a query that is only small talk (g.Only) gets a chitchat probability
//     of at least TalkPrecision, the others sharing the rest in proportion.
func (m *Model) Probs(feats []uint32, g Gate) [K]float64 {
	var z [K]float32
	m.Logits(feats, &z)
	z[Chitchat] -= m.ChitchatMargin
	if g.Substance {
		z[Chitchat] -= m.SubstanceMargin
	}
	if !g.Chat {
		z[Chitchat] = float32(math.Inf(-1))
	}
	p := Softmax(z, m.Temperature)
	if g.Chat && g.Only && p[Chitchat] < float64(m.TalkPrecision) {
		floor := float64(m.TalkPrecision)
		rest := 1 - p[Chitchat]
		for c := range p {
			if c == Chitchat {
				p[c] = floor
			} else {
				p[c] *= (1 - floor) / rest
			}
		}
	}
	return p
}

// Softmax of z/t (t <= 0 means 1).
func Softmax(z [K]float32, t float32) [K]float64 {
	if t <= 0 {
		t = 1
	}
	var p [K]float64
	mx := math.Inf(-1)
	for i := range z {
		mx = math.Max(mx, float64(z[i]/t))
	}
	sum := 0.0
	for i := range z {
		p[i] = math.Exp(float64(z[i]/t) - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// Encode writes m as gzip(header, int16 weights scaled by the largest
// magnitude) followed by a CRC-32 of the uncompressed payload.
func Encode(w io.Writer, m *Model) error {
	if len(m.W) != int(m.Buckets)*K {
		return fmt.Errorf("feat: %d weights for %d buckets", len(m.W), m.Buckets)
	}
	var maxAbs float32
	for _, v := range m.W {
		maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
	}
	scale := maxAbs / 32767
	if scale == 0 {
		scale = 1
	}
	var raw bytes.Buffer
	raw.WriteString(magic)
	le := binary.LittleEndian
	for _, v := range []any{uint32(version), uint32(K), m.Buckets, m.Temperature, m.ChitchatMargin, m.SubstanceMargin, m.TalkPrecision, scale} {
		if err := binary.Write(&raw, le, v); err != nil {
			return err
		}
	}
	q := make([]int16, len(m.W))
	for i, v := range m.W {
		q[i] = int16(math.Round(float64(v / scale)))
	}
	if err := binary.Write(&raw, le, q); err != nil {
		return err
	}
	crc := crc32.ChecksumIEEE(raw.Bytes())
	_ = binary.Write(&raw, le, crc)
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return err
	}
	return zw.Close()
}

// Decode reads a model written by Encode.
func Decode(blob []byte) (*Model, error) {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	const head = 4 + 8*4
	if len(raw) < head+4 || string(raw[:4]) != magic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	le := binary.LittleEndian
	body, sum := raw[:len(raw)-4], le.Uint32(raw[len(raw)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if v := le.Uint32(raw[4:]); v != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, v, version)
	}
	if k := le.Uint32(raw[8:]); k != uint32(K) {
		return nil, fmt.Errorf("%w: %d classes, want %d", ErrCorrupt, k, K)
	}
	m := &Model{
		Buckets:         le.Uint32(raw[12:]),
		Temperature:     math.Float32frombits(le.Uint32(raw[16:])),
		ChitchatMargin:  math.Float32frombits(le.Uint32(raw[20:])),
		SubstanceMargin: math.Float32frombits(le.Uint32(raw[24:])),
		TalkPrecision:   math.Float32frombits(le.Uint32(raw[28:])),
	}
	scale := math.Float32frombits(le.Uint32(raw[32:]))
	n := int(m.Buckets) * K
	if m.Buckets == 0 || m.Buckets&(m.Buckets-1) != 0 || len(body) != head+2*n {
		return nil, fmt.Errorf("%w: %d buckets in %d bytes", ErrCorrupt, m.Buckets, len(body))
	}
	m.W = make([]float32, n)
	for i := range m.W {
		m.W[i] = float32(int16(le.Uint16(body[head+2*i:]))) * scale
	}
	return m, nil
}
