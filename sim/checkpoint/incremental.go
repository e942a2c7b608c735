package checkpoint

// ChangeTracker knows which keys changed since the last completed
// checkpoint: what an incremental RocksDB checkpoint uploads
// (state.backend.incremental; RocksDB uploads only the SST files created
// since the last completed checkpoint, here the keys written since its
// snapshot). Each snapshot opens a new epoch; a key remembers the epoch of
// its last write; a key is changed when it was written in or after the
// epoch the last completed checkpoint's snapshot opened.
type ChangeTracker struct {
	mod       map[string]int64 // key -> epoch of its last write
	epoch     int64            // the current epoch
	epochOf   map[int64]int64  // checkpoint id -> the epoch its snapshot opened
	completed int64            // the epoch the last completed checkpoint's snapshot opened
}

// NewChangeTracker starts at epoch 0: every key written counts as changed
// until a checkpoint completes.
func NewChangeTracker() *ChangeTracker {
	return &ChangeTracker{mod: map[string]int64{}, epochOf: map[int64]int64{}}
}

// Touch records a write of key.
func (t *ChangeTracker) Touch(key string) { t.mod[key] = t.epoch }

// Changed reports whether key was written since the last completed
// checkpoint's snapshot (or ever, before one completed).
func (t *ChangeTracker) Changed(key string) bool {
	m, ok := t.mod[key]
	return ok && m >= t.completed
}

// Snapshot is the snapshot of checkpoint id: later writes belong to a new
// epoch.
func (t *ChangeTracker) Snapshot(id int64) {
	t.epoch++
	t.epochOf[id] = t.epoch
}

// Complete is checkpoint id completing: what its snapshot saw is uploaded,
// so keys unchanged since then need no upload; older pending epochs are
// forgotten.
func (t *ChangeTracker) Complete(id int64) {
	if e, ok := t.epochOf[id]; ok && e > t.completed {
		t.completed = e
	}
	for k := range t.epochOf {
		if k <= id {
			delete(t.epochOf, k)
		}
	}
}
