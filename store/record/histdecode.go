package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Decoding a histogram allocates what its header claims: HdrHistogram's
// Decode trusts the geometry, and a 53-character payload declaring
// 1..MaxInt64 at 5 digits allocates 49 MB. A histogram log comes with a run
// directory (anyone's) and an agent's result from a load host, so both are
// decoded here, accepting only the geometry threadlab records
// (measure/load: 1 µs to 60 s, 2 or 3 significant digits) and charging
// every histogram's counts to a budget before it is allocated.

// The geometry every threadlab histogram has (measure/load's histMin,
// histMax; histDigits and secDigits).
const (
	HistLowest  = 1
	HistHighest = 60_000_000
)

// MaxHistogramText bounds one encoded histogram: a full-precision 60 s
// histogram with every bucket used compresses to well under this.
const MaxHistogramText = 1 << 20

// DefaultHistogramBudget is the decoded size allowed for the histograms of
// one log or one agent result: about 900 full-precision histograms (140 KB
// each) or 6,000 per-second ones (20 KB each).
const DefaultHistogramBudget = 128 << 20

// encodingHeader is the size of HdrHistogram's V2 header inside the
// compressed payload: cookie, payload length, normalizing offset, digits
// (int32 each), lowest and highest trackable value (int64 each), and the
// conversion ratio (float64).
const encodingHeader = 40

// HistogramBudget charges decoded histograms against a byte budget.
// The zero value has no budget left: use NewHistogramBudget.
type HistogramBudget struct{ left int64 }

// NewHistogramBudget allows bytes of decoded counts.
func NewHistogramBudget(bytes int64) *HistogramBudget { return &HistogramBudget{left: bytes} }

var (
	countsOnce  sync.Once
	countsBytes map[int32]int64 // digits -> decoded size of that geometry
)

// geometryBytes is the decoded size of a histogram of threadlab's range at
// digits significant digits, 0 for a geometry threadlab never writes.
func geometryBytes(digits int32) int64 {
	countsOnce.Do(func() {
		countsBytes = map[int32]int64{}
		for _, d := range []int32{2, 3} {
			countsBytes[d] = int64(hdrhistogram.New(HistLowest, HistHighest, int(d)).ByteSize())
		}
	})
	return countsBytes[digits]
}

// Decode decodes one base64 V2-compressed histogram after checking its
// header: threadlab's geometry only, and its size within the budget.
func (b *HistogramBudget) Decode(text string) (*hdrhistogram.Histogram, error) {
	if len(text) > MaxHistogramText {
		return nil, fmt.Errorf("an encoded histogram of %d bytes, more than the %d threadlab's ever take", len(text), MaxHistogramText)
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	digits, lowest, highest, err := peekGeometry(raw)
	if err != nil {
		return nil, err
	}
	size := geometryBytes(digits)
	if lowest != HistLowest || highest != HistHighest || size == 0 {
		return nil, fmt.Errorf("a histogram of %d..%d at %d significant digits: threadlab records %d..%d µs at 2 or 3 digits only, so this is not a histogram threadlab wrote", lowest, highest, digits, HistLowest, HistHighest)
	}
	if b.left < size {
		return nil, fmt.Errorf("more histograms than threadlab writes for one trial (over %d MB decoded): not a log or result threadlab wrote", DefaultHistogramBudget>>20)
	}
	b.left -= size
	return hdrhistogram.Decode([]byte(text))
}

// peekGeometry reads the geometry from an encoded histogram's header,
// inflating only its first 40 bytes.
func peekGeometry(raw []byte) (digits int32, lowest, highest int64, err error) {
	if len(raw) < 8 {
		return 0, 0, 0, errors.New("histogram: too short for its header")
	}
	if cookie := int32(binary.BigEndian.Uint32(raw[0:4])) &^ 0xf0; cookie != hdrhistogram.V2CompressedEncodingCookieBase {
		return 0, 0, 0, fmt.Errorf("histogram: not HdrHistogram's V2 compressed encoding (cookie %#x)", cookie)
	}
	n := int64(binary.BigEndian.Uint32(raw[4:8]))
	if n > int64(len(raw)-8) {
		return 0, 0, 0, fmt.Errorf("histogram: claims %d compressed bytes, holds %d", n, len(raw)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("histogram: %w", err)
	}
	defer z.Close()
	var h [encodingHeader]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return 0, 0, 0, fmt.Errorf("histogram header: %w", err)
	}
	digits = int32(binary.BigEndian.Uint32(h[12:16]))
	lowest = int64(binary.BigEndian.Uint64(h[16:24]))
	highest = int64(binary.BigEndian.Uint64(h[24:32]))
	return digits, lowest, highest, nil
}
