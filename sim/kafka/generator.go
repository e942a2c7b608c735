package kafka

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/vt"
)

// GeneratorConfig is the built-in generator of a source topic: every TickUs
// of virtual time from FirstTickUs on, it appends the records it owes at
// Rate records per virtual second, keys uniform over Keys, event time up to
// DisorderMs behind the clock and a LateFraction of records LateMs further
// behind still (late for the window).
type GeneratorConfig struct {
	Partitions   int     // partitions of the topic (> 0)
	Rate         float64 // records per virtual second (>= 0)
	Keys         int     // keys user-0 ... user-(Keys-1); < 1 reads as 1
	DisorderMs   int64   // >= 0
	LateMs       int64   // how far a late record is behind DisorderMs
	LateFraction float64 // 0..1
	EpochMs      int64   // event time of virtual time 0 (ms)
	FirstTickUs  vt.Time // virtual time of the first tick
	TickUs       vt.Time // virtual time between ticks (> 0)
	// Seed and Stream seed the generator's PCG: the draws are those of
	// rand.New(rand.NewPCG(Seed, Stream)).
	Seed, Stream uint64
}

// Sizes of the generator's blocks and of its cache of materialised blocks.
const (
	genBlockRecords = 4096    // a block closes after the tick that reaches this many records
	genCacheRecords = 1 << 18 // records of closed blocks kept materialised (about 6 MB)
)

// GeneratedTopic is a source topic filled by the built-in generator. Its
// records are a pure function of the configuration and the tick, so it
// keeps none of them for good: ticks are grouped in blocks, each block keeps
// the generator's state at its first tick (the PCG state, the rate
// accumulator, the next order number) and its first offset per partition,
// and a block that is read again is recomputed from that state. The block
// being generated and the most recently used closed blocks (about
// genCacheRecords records) stay materialised, as compact pointer-free
// arrays. Memory is therefore flat over virtual time: a few dozen bytes per
// block of ~4096 records, plus the cache, plus one key string per key.
//
// A record is visible (counted in EndOffset, readable) from the virtual time
// of its tick; AdvanceTo makes ticks visible. Ticks may be generated ahead of
// time (FirstData), which draws nothing that would not be drawn anyway.
// Not safe for concurrent use.
type GeneratedTopic struct {
	Name string
	c    GeneratorConfig

	keyStr  []string // key strings by number, built on first use
	keyPart []int32  // partition by key number + 1; 0 before first use

	gen     *drawer   // the state after the last generated tick
	next    vt.Time   // virtual time of the next tick to generate
	genEnd  []int64   // end offset per partition over the generated ticks
	end     []int64   // end offset per partition over the visible ticks
	total   int64     // visible records
	pending []genTick // generated ticks not yet visible, in time order
	free    [][]int64 // spare end-offset arrays of pending ticks
	seen    vt.Time   // virtual time of the last visible tick (-1: none)
	peekEnd []int64   // PeekAt's copy of end

	blocks []genBlock  // every block, the live one last
	starts []int64     // starts[b*Partitions+p]: first offset of block b in partition p
	live   *blockData  // the records of the live block generated so far
	cache  []cachedBlk // closed blocks kept materialised, least recently used first
	cached int         // records in cache
	redraw *drawer     // regenerates closed blocks
	spare  *blockData  // an evicted block's arrays, for reuse

	blockRecords, cacheRecords int // genBlockRecords, genCacheRecords (smaller in tests)
	regenerated                int // closed blocks recomputed from their state so far
}

// genState is the generator's state between two ticks.
type genState struct {
	pcg rand.PCG
	acc float64 // records owed but not yet generated (fraction)
	seq int64   // order number of the next record
}

// drawer is a genState with a rand.Rand drawing from its PCG.
type drawer struct {
	st  genState
	rng *rand.Rand
}

func newDrawer() *drawer {
	d := &drawer{}
	d.rng = rand.New(&d.st.pcg)
	return d
}

// genBlock is a run of consecutive ticks.
type genBlock struct {
	state   genState // before its first tick
	first   vt.Time  // virtual time of its first tick
	ticks   int      // ticks generated in it
	records int      // records generated in it
}

// genRecord is one generated record, compact and pointer-free: its value is
// formatted from seq and cents when it is read.
type genRecord struct {
	ts    int64 // event time (ms)
	seq   int64 // order number (order_id o-seq)
	key   int32 // key number (user-key)
	cents int32 // amount in cents
}

// blockData holds the records of one block, per partition in offset order.
type blockData struct {
	recs [][]genRecord
}

type cachedBlk struct {
	block int
	data  *blockData
}

// genTick is a generated tick that is not yet visible.
type genTick struct {
	at   vt.Time
	ends []int64 // end offsets per partition after it
}

// NewGeneratedTopic returns the topic name filled by the generator c, with
// nothing visible yet.
func NewGeneratedTopic(name string, c GeneratorConfig) *GeneratedTopic {
	c.Keys = max(1, c.Keys)
	g := &GeneratedTopic{Name: name, c: c, keyStr: make([]string, c.Keys), keyPart: make([]int32, c.Keys),
		gen: newDrawer(), redraw: newDrawer(), next: c.FirstTickUs, blockRecords: genBlockRecords, cacheRecords: genCacheRecords,
		genEnd: make([]int64, c.Partitions), end: make([]int64, c.Partitions), seen: -1}
	g.gen.st.pcg = *rand.NewPCG(c.Seed, c.Stream)
	g.openBlock()
	return g
}

var _ Log = (*GeneratedTopic)(nil)

// NumPartitions is the number of partitions.
func (g *GeneratedTopic) NumPartitions() int { return g.c.Partitions }

// LogStartOffset is 0: nothing is deleted.
func (g *GeneratedTopic) LogStartOffset(int) int64 { return 0 }

// EndOffset is partition p's end offset over the visible ticks.
func (g *GeneratedTopic) EndOffset(p int) int64 { return g.end[p] }

// Total is the number of visible records.
func (g *GeneratedTopic) Total() int64 { return g.total }

// AdvanceTo makes every tick at or before virtual time now visible and
// returns how many records became visible.
func (g *GeneratedTopic) AdvanceTo(now vt.Time) int64 {
	before := g.total
	for {
		if _, _, ok := g.AdvanceNext(now); !ok {
			return g.total - before
		}
	}
}

// AdvanceNext makes the next tick visible if it is at or before virtual
// time limit (µs) and returns its virtual time and how many records it
// brought (ok false when no tick is due by limit).
func (g *GeneratedTopic) AdvanceNext(limit vt.Time) (at vt.Time, records int64, ok bool) {
	if len(g.pending) == 0 {
		if g.next > limit {
			return 0, 0, false
		}
		g.generate()
	}
	t := g.pending[0]
	if t.at > limit {
		return 0, 0, false
	}
	before := g.total
	for p, e := range t.ends {
		g.total += e - g.end[p]
		g.end[p] = e
	}
	g.free = append(g.free, t.ends)
	g.pending = slices.Delete(g.pending, 0, 1)
	g.seen = t.at
	return t.at, g.total - before, true
}

// FirstData is the virtual time (µs) of the first tick after the visible
// ones, strictly before virtual time before, that gives partition p a
// record at an offset at or beyond offset; ok is false when none does. It
// generates ticks ahead as far as it needs to (the same draws as when they
// are reached).
func (g *GeneratedTopic) FirstData(p int, offset int64, before vt.Time) (vt.Time, bool) {
	for i := 0; ; i++ {
		if i == len(g.pending) {
			if g.next >= before {
				return 0, false
			}
			g.generate()
		}
		t := g.pending[i]
		if t.at >= before {
			return 0, false
		}
		if t.ends[p] > offset {
			return t.at, true
		}
	}
}

// GenerateTo generates, not yet visible, every tick at or before now: the
// same draws as when they are reached, so nothing read later changes.
func (g *GeneratedTopic) GenerateTo(now vt.Time) {
	for g.next <= now {
		g.generate()
	}
}

// Seen is the virtual time of the last tick visible (AdvanceTo), or -1.
func (g *GeneratedTopic) Seen() vt.Time { return g.seen }

// PeekAt makes the topic look as it will at virtual time at (every tick at
// or before it visible, none generated beyond those already generated ahead
// made up) until the returned Peek's Back puts it back: what a fetch
// answered ahead of its time reads. at must not be before the visible
// ticks; nothing may advance the topic until it is put back.
func (g *GeneratedTopic) PeekAt(at vt.Time) Peek {
	i := 0
	for i < len(g.pending) && g.pending[i].at <= at {
		i++
	}
	if i == 0 {
		return Peek{}
	}
	g.peekEnd = append(g.peekEnd[:0], g.end...)
	back := Peek{g: g, total: g.total}
	for p, e := range g.pending[i-1].ends {
		g.total += e - g.end[p]
		g.end[p] = e
	}
	return back
}

// Peek is a generated topic made to look as at a later time (PeekAt), or
// nothing (the zero Peek). A value, not a closure: a fetch answered ahead
// peeks at every tick.
type Peek struct {
	g     *GeneratedTopic
	total int64
}

// Back puts the topic back as it was before PeekAt.
func (p Peek) Back() {
	if p.g != nil {
		copy(p.g.end, p.g.peekEnd)
		p.g.total = p.total
	}
}

// generate generates the tick at g.next (not yet visible).
func (g *GeneratedTopic) generate() {
	if b := &g.blocks[len(g.blocks)-1]; b.records >= g.blockRecords {
		g.closeBlock()
	}
	b := &g.blocks[len(g.blocks)-1]
	n := g.tick(g.gen, g.next, g.live)
	b.ticks++
	b.records += n
	var ends []int64
	if k := len(g.free); k > 0 {
		ends, g.free = g.free[k-1], g.free[:k-1]
	} else {
		ends = make([]int64, g.c.Partitions)
	}
	for p := range ends {
		g.genEnd[p] = g.starts[(len(g.blocks)-1)*g.c.Partitions+p] + int64(len(g.live.recs[p]))
		ends[p] = g.genEnd[p]
	}
	g.pending = append(g.pending, genTick{at: g.next, ends: ends})
	g.next += g.c.TickUs
}

// tick draws the records of the tick at virtual time at from d into data
// and returns how many it drew: the original generator's draws, in order
// (key, disorder, lateness, amount per record).
func (g *GeneratedTopic) tick(d *drawer, at vt.Time, data *blockData) int {
	c := &g.c
	d.st.acc += c.Rate * float64(c.TickUs) / 1e6
	n := int(d.st.acc)
	d.st.acc -= float64(n)
	nowMs := c.EpochMs + vt.Millis(at)
	rng := d.rng
	for i := 0; i < n; i++ {
		key := rng.IntN(c.Keys)
		ts := nowMs
		if c.DisorderMs > 0 {
			ts -= rng.Int64N(c.DisorderMs + 1)
		}
		if c.LateFraction > 0 && rng.Float64() < c.LateFraction {
			ts = nowMs - c.DisorderMs - c.LateMs
		}
		cents := rng.IntN(50000) + 100
		p := g.partitionOf(key)
		data.recs[p] = append(data.recs[p], genRecord{ts: ts, seq: d.st.seq, key: int32(key), cents: int32(cents)})
		d.st.seq++
	}
	return n
}

// openBlock starts a block at the generator's current state.
func (g *GeneratedTopic) openBlock() {
	g.blocks = append(g.blocks, genBlock{state: g.gen.st, first: g.next})
	g.starts = append(g.starts, g.genEnd...)
	g.live = g.newData()
}

// closeBlock moves the live block to the cache and opens the next one.
func (g *GeneratedTopic) closeBlock() {
	g.remember(len(g.blocks)-1, g.live)
	g.openBlock()
}

func (g *GeneratedTopic) newData() *blockData {
	if d := g.spare; d != nil {
		g.spare = nil
		for p := range d.recs {
			d.recs[p] = d.recs[p][:0]
		}
		return d
	}
	return &blockData{recs: make([][]genRecord, g.c.Partitions)}
}

// remember puts block b's data in the cache as the most recently used and
// evicts the least recently used beyond cacheRecords.
func (g *GeneratedTopic) remember(b int, d *blockData) {
	g.cache = append(g.cache, cachedBlk{block: b, data: d})
	g.cached += g.blocks[b].records
	for len(g.cache) > 1 && g.cached > g.cacheRecords {
		old := g.cache[0]
		g.cached -= g.blocks[old.block].records
		g.cache = slices.Delete(g.cache, 0, 1)
		g.spare = old.data
	}
}

// data returns block b's records, materialising it if needed.
func (g *GeneratedTopic) data(b int) *blockData {
	if b == len(g.blocks)-1 {
		return g.live
	}
	for i := len(g.cache) - 1; i >= 0; i-- {
		if e := g.cache[i]; e.block == b {
			if i != len(g.cache)-1 {
				copy(g.cache[i:], g.cache[i+1:])
				g.cache[len(g.cache)-1] = e
			}
			return e.data
		}
	}
	blk := &g.blocks[b]
	g.regenerated++
	d := g.newData()
	g.redraw.st = blk.state
	for t := 0; t < blk.ticks; t++ {
		g.tick(g.redraw, blk.first+vt.Time(t)*g.c.TickUs, d)
	}
	g.remember(b, d)
	return d
}

// ReadInto implements Log: it fills dst with the visible records of
// partition p from offset on, formatting their values into *vals.
func (g *GeneratedTopic) ReadInto(dst []*messages.KafkaRecord, p int, offset int64, vals *[]byte) {
	for len(dst) > 0 {
		b := g.blockOf(p, offset)
		recs := g.data(b).recs[p]
		i := int(offset - g.starts[b*g.c.Partitions+p])
		if i >= len(recs) {
			panic("kafka: read beyond the end of generated partition " + strconv.Itoa(p))
		}
		for ; i < len(recs) && len(dst) > 0; i++ {
			g.fill(dst[0], p, offset, &recs[i], vals)
			dst = dst[1:]
			offset++
		}
	}
}

// blockOf is the block holding offset of partition p: the last block whose
// first offset in p is at or before offset. Cost: O(log blocks).
func (g *GeneratedTopic) blockOf(p int, offset int64) int {
	P := g.c.Partitions
	lo, hi := 0, len(g.blocks) // the answer is in [lo, hi)
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if g.starts[m*P+p] <= offset {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// fill materialises r, the record at offset of partition p.
func (g *GeneratedTopic) fill(dst *messages.KafkaRecord, p int, offset int64, r *genRecord, vals *[]byte) {
	v := *vals
	a := len(v)
	v = append(v, `{"order_id":"o-`...)
	v = strconv.AppendInt(v, r.seq, 10)
	v = append(v, `","amount":`...)
	v = appendCents(v, r.cents)
	v = append(v, '}')
	*vals = v
	dst.Partition = int32(p)
	dst.Offset = offset
	dst.Timestamp = r.ts
	dst.Key = g.key(int(r.key))
	dst.Value = v[a:len(v):len(v)]
}

// Regenerated is the number of times a block of records was recomputed from
// its seed state because it was read after leaving the cache.
func (g *GeneratedTopic) Regenerated() int { return g.regenerated }

// appendCents appends the amount of c cents (c >= 0) as
// strconv.AppendFloat(dst, float64(c)/100, 'f', -1, 64) does: the shortest
// decimal that reads back as that float64 is c/100 itself, with trailing
// zeros of the fraction dropped, since a float64 near any c below 2^53/100
// has room for far more digits (TestAppendCentsIsAppendFloat checks every
// amount the generator draws).
func appendCents(dst []byte, c int32) []byte {
	dst = strconv.AppendInt(dst, int64(c/100), 10)
	switch f := c % 100; {
	case f == 0:
	case f%10 == 0:
		dst = append(dst, '.', byte('0'+f/10))
	default:
		dst = append(dst, '.', byte('0'+f/10), byte('0'+f%10))
	}
	return dst
}

// key is the string of key number n.
func (g *GeneratedTopic) key(n int) string {
	if g.keyStr[n] == "" {
		g.keyStr[n] = "user-" + strconv.Itoa(n)
	}
	return g.keyStr[n]
}

// partitionOf is the partition of key number n (DefaultPartition of its
// string).
func (g *GeneratedTopic) partitionOf(n int) int {
	if g.keyPart[n] == 0 {
		g.keyPart[n] = int32(DefaultPartition([]byte(g.key(n)), g.c.Partitions)) + 1
	}
	return int(g.keyPart[n] - 1)
}
