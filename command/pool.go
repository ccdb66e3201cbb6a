package command

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// task is one run waiting for, or running on, a pool worker.
type task interface {
	// runTask runs on a worker goroutine. It calls p.ran exactly once,
	// as soon as its user code has returned and before it tells its
	// caller (a waiting Command.call or a subscription), so that a caller
	// who submits again at once finds the slot free and the run counted;
	// a task that concludes its execution on the worker calls p.exit
	// instead, which starts the next queued task then.
	// The slot of a task whose user code never ran goes back once, by
	// p.release: the task's, or its caller's if the caller abandoned it
	// first (the one that wins the task's state says). Times are the pool
	// clock's readings in Unix nanoseconds (clock.UnixNano).
	runTask(p *pool, start int64)
}

// unread is a time not read from the clock: the start of a task that
// waited in the queue, which its worker reads when it takes the task, and
// the end of one that did not read the clock when its user code returned.
const unread = math.MinInt64

// selfStarter is a task that starts its own worker goroutine, with a
// function value it made once: a go statement with arguments allocates
// the closure that carries them, and a pool-isolated command submits a
// task per run.
type selfStarter interface {
	task
	// startOn runs p.work(t, start) on a new goroutine.
	startOn(p *pool, start int64)
}

// spawn starts a worker goroutine that runs t, started at start (unread
// if it waited in the queue), then what is queued.
func (p *pool) spawn(t task, start int64) {
	if s, ok := t.(selfStarter); ok {
		s.startOn(p, start)
		return
	}
	go p.work(t, start)
}

// poolRecorder receives what a pool does; metricsstream.PoolMetrics
// implements it. The pool counts its running tasks itself, in its slots,
// and the recorder reports that count (see newPool), so that a run
// changes one shared count, not two. SetQueueSize is called under the
// pool's lock, so that the sizes it records are in the order the queue
// took them.
type poolRecorder interface {
	CountActiveWith(active func() int64)
	MarkStartedAt(now, active int64) int64
	MarkExecutedAt(now int64)
	MarkRejected()
	SetQueueSize(n int)
}

// pool is Hystrix's thread pool in goroutines: at most CoreSize tasks run
// at once, and a task that finds every slot busy waits in a FIFO queue of
// at most min(MaxQueueSize, QueueSizeRejectionThreshold) tasks, or is
// rejected. Workers are goroutines started on demand: a worker that finds
// the queue empty exits, so an idle pool holds no goroutine, and the number
// of goroutines running user code never exceeds CoreSize, whatever the
// timeouts do (a timed-out run keeps its slot until it returns, as a
// Hystrix thread stays busy).
//
// The fields are grouped by how they are written, each group on cache
// lines of its own: every submit reads the first group, which changes
// rarely, and takes and frees a slot in the second; the queue's group is
// written only when tasks wait.
type pool struct {
	key     string
	perCall bool
	// named says a command's Config.Pool names the pool too, though a
	// WithPoolKey function made it: it is then never retired. Set under
	// the registry's mu, which the sweep holds.
	named    atomic.Bool
	clock    clock.Clock
	recorder poolRecorder
	config   atomic.Pointer[PoolConfig]
	limiter  atomic.Pointer[limit.Limiter] // PoolConfig.AdaptiveLimit's, stored before the config naming it
	lastUsed atomic.Int64                  // unix nanoseconds of a recent submit, to the millisecond
	ended    atomic.Bool                   // retired, as busy tells; read where busy would be a miss

	_       [64]byte
	busy    atomic.Int64 // tasks running user code, at most CoreSize
	largest atomic.Int64 // the most tasks ever running at once

	_      [64]byte
	queued atomic.Int64 // len(queue), readable without the lock
	mu     sync.Mutex   // guards queue
	queue  []task
}

func newPool(key string, cfg PoolConfig, perCall bool, c clock.Clock, recorder poolRecorder) *pool {
	p := &pool{key: key, perCall: perCall, clock: c, recorder: recorder}
	recorder.CountActiveWith(p.active)
	cfg = cfg.withDefaults()
	p.limiter.Store(nextLimiter(nil, cfg.AdaptiveLimit, cfg.CoreSize))
	p.config.Store(&cfg)
	return p
}

// What submit did with a task.
type submitted int

const (
	submitAccepted submitted = iota // started on a worker or queued
	submitRejected                  // every slot and queue place was taken
	submitRetired                   // the pool was retired: submit to its successor
)

// retiredBusy is the busy count of a retired pool: below any count, so
// that no slot is taken in it again.
const retiredBusy = math.MinInt64 / 2

// submit starts t on a worker, queues it, or reports that the pool
// rejects it or was retired. The command started at now.
func (p *pool) submit(t task, now int64) submitted {
	p.used(now)
	cfg := p.config.Load()
	// The fast path takes a free slot without the lock, unless tasks are
	// waiting: they go first.
	if p.queued.Load() == 0 && p.acquire(cfg) {
		p.spawn(t, now)
		return submitAccepted
	}
	p.mu.Lock()
	cfg = p.config.Load() // configure may have changed it meanwhile
	if len(p.queue) == 0 && p.acquire(cfg) {
		p.mu.Unlock()
		p.spawn(t, now)
		return submitAccepted
	}
	if p.retired() {
		p.mu.Unlock()
		return submitRetired
	}
	if len(p.queue) >= cfg.queueLimit() {
		p.mu.Unlock()
		p.recorder.MarkRejected()
		return submitRejected
	}
	p.queue = append(p.queue, t)
	p.queued.Store(int64(len(p.queue)))
	// A worker that freed its slot before it could see this task queued
	// has left; start the task here if a slot is free now. The size is
	// read again after the task is seen queued: a configure that grew the
	// pool before this read is read here, and one after it finds the task
	// queued (startQueued).
	start := p.popLocked(p.config.Load())
	p.recorder.SetQueueSize(len(p.queue))
	p.mu.Unlock()
	if start != nil {
		p.spawn(start, unread)
	}
	return submitAccepted
}

// used notes that the pool was used at now.
func (p *pool) used(now int64) {
	// Idle pools are retired after minutes: a millisecond is precise
	// enough, and spares busy callers a write to a shared line.
	if now-p.lastUsed.Load() >= int64(time.Millisecond) {
		p.lastUsed.Store(now)
	}
}

// enter takes a slot for a task its caller runs on its own goroutine, if
// a slot is free and no task waits for one (they go first); the task must
// then be ended with exit. The command started at now.
func (p *pool) enter(now int64) bool {
	p.used(now)
	return p.queued.Load() == 0 && p.acquire(p.config.Load())
}

// exit ends a task that entered and whose user code returned at end, as
// a worker ends one: it frees the slot, counts the run, and starts the
// first queued task if any.
func (p *pool) exit(end int64) {
	p.ran(end)
	p.startNext()
}

// startNext starts the first queued task on a worker of its own, if a
// slot is free: what a worker that freed its slot does when it goes on to
// conclude an execution (tell a subscriber, run a fallback) before it
// would take the next task itself.
func (p *pool) startNext() {
	if t := p.next(); t != nil {
		p.spawn(t, unread)
	}
}

// acquire takes a slot if fewer tasks than the pool's size run and the
// pool is not retired.
func (p *pool) acquire(cfg *PoolConfig) bool {
	size := int64(cfg.CoreSize)
	if cfg.AdaptiveLimit != nil {
		size = int64(p.capacity(cfg))
	}
	for {
		n := p.busy.Load()
		if n < 0 || n >= size {
			return false
		}
		if p.busy.CompareAndSwap(n, n+1) {
			if n+1 > p.largest.Load() {
				storeMax(&p.largest, n+1)
			}
			return true
		}
	}
}

// popLocked takes the first queued task with a slot for it, or returns
// nil.
func (p *pool) popLocked(cfg *PoolConfig) task {
	if len(p.queue) == 0 || !p.acquire(cfg) {
		return nil
	}
	t := p.queue[0]
	p.queue[0] = nil
	p.queue = p.queue[1:]
	p.queued.Store(int64(len(p.queue)))
	return t
}

// remove takes t out of the queue if it is still waiting there, and
// reports whether it did.
func (p *pool) remove(t task) bool {
	p.mu.Lock()
	i := slices.Index(p.queue, t)
	if i < 0 {
		p.mu.Unlock()
		return false
	}
	p.queue = slices.Delete(p.queue, i, i+1)
	p.queued.Store(int64(len(p.queue)))
	p.recorder.SetQueueSize(len(p.queue))
	p.mu.Unlock()
	return true
}

// work runs t, then queued tasks while there are any and a slot is free.
// A task submitted at start and started at once starts then; for one
// that waited, start is unread and the clock is read.
func (p *pool) work(t task, start int64) {
	for t != nil {
		if start == unread {
			start = clock.UnixNano(p.clock)
		}
		p.recorder.MarkStartedAt(start, p.active())
		t.runTask(p, start)
		t, start = p.next(), unread
	}
}

// active returns how many tasks run user code now.
func (p *pool) active() int64 { return max(p.busy.Load(), 0) }

// release frees the slot of a task whose user code did not run.
func (p *pool) release() { p.busy.Add(-1) }

// exitUnrun is exit for a task whose user code did not run: it frees the
// slot (release) and starts the first queued task, for a worker that goes
// on to conclude the task's execution itself (a timeout found in the
// queue, a caller who left), and for a caller that left a task a worker
// had taken but not started: that worker, which finds the task abandoned,
// may have looked for the next queued task while the slot was still
// taken, and left.
func (p *pool) exitUnrun() {
	p.release()
	p.startNext()
}

// ran counts the run of a task whose user code returned at end (unread:
// the clock is read) as executed, then frees its slot: whoever sees the
// active count fall finds the run counted, as CommandMetrics'
// MarkCompletion orders its count of executions. Its caller is told
// after this, so that what it reads of the pool's metrics holds the run.
func (p *pool) ran(end int64) {
	if end == unread {
		end = clock.UnixNano(p.clock)
	}
	p.recorder.MarkExecutedAt(end)
	// The pool had work until now: its idle time (IdleTimeout) counts from
	// here, not from when the run was submitted. Noted before the slot is
	// freed, so that a sweep that finds the pool idle finds it noted.
	p.used(end)
	p.busy.Add(-1)
}

// next takes the next queued task if a slot is free, or retires the
// worker. A submitter that queued a task after this worker looked starts
// it itself (see submit).
func (p *pool) next() task {
	if p.queued.Load() == 0 {
		return nil
	}
	cfg := p.config.Load()
	p.mu.Lock()
	t := p.popLocked(cfg)
	if t != nil {
		p.recorder.SetQueueSize(len(p.queue))
	}
	p.mu.Unlock()
	return t
}

// capacity returns how many tasks may run at once: CoreSize, or the adaptive
// limit's current limit when cfg, the pool's config, names one.
func (p *pool) capacity(cfg *PoolConfig) int {
	if l := p.limiterFor(cfg); l != nil {
		return l.Limit()
	}
	return cfg.CoreSize
}

// limiterFor returns the pool's adaptive limit if cfg, its config, names
// one.
func (p *pool) limiterFor(cfg *PoolConfig) *limit.Limiter {
	if cfg.AdaptiveLimit == nil {
		return nil
	}
	return p.limiter.Load()
}

// PoolStatus reports the pool's sizes to its metrics, for the dashboard
// stream: with an adaptive limit, the core and maximum sizes are its
// current limit.
func (p *pool) PoolStatus() metricsstream.PoolStatus {
	cfg := p.config.Load()
	running, _ := p.size()
	size := p.capacity(cfg)
	var adaptive string
	if l := p.limiterFor(cfg); l != nil {
		adaptive = l.Algorithm().Name()
	}
	return metricsstream.PoolStatus{
		CoreSize:                    size,
		MaximumSize:                 size,
		AdaptiveLimit:               adaptive,
		PoolSize:                    running,
		LargestPoolSize:             int(p.largest.Load()),
		MaxQueueSize:                cfg.MaxQueueSize,
		QueueSizeRejectionThreshold: cfg.QueueSizeRejectionThreshold,
	}
}

// configure changes the pool's size, adaptive limit and queue threshold
// live. MaxQueueSize is kept from creation, as in Hystrix. A larger size
// starts workers for queued tasks at once.
func (p *pool) configure(cfg PoolConfig) {
	cfg = cfg.withDefaults()
	old := p.config.Load()
	cfg.MaxQueueSize = old.MaxQueueSize
	start := cfg.CoreSize
	if l := p.limiterFor(old); l != nil {
		start = l.Limit()
	}
	p.limiter.Store(nextLimiter(p.limiterFor(old), cfg.AdaptiveLimit, start))
	p.config.Store(&cfg)
	p.startQueued()
}

// startQueued starts workers for queued tasks while slots are free: after
// the pool's size grew.
func (p *pool) startQueued() {
	for p.queued.Load() > 0 {
		cfg := p.config.Load()
		p.mu.Lock()
		t := p.popLocked(cfg)
		p.recorder.SetQueueSize(len(p.queue))
		p.mu.Unlock()
		if t == nil {
			return
		}
		p.spawn(t, unread)
	}
}

// idle reports whether the pool runs and queues nothing.
func (p *pool) idle() bool {
	return p.busy.Load() <= 0 && p.queued.Load() == 0
}

// retire marks the pool retired if it runs and queues nothing, and
// reports whether it did. A retired pool takes no task again: whoever
// still holds it is told to submit to its successor.
func (p *pool) retire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) > 0 || !p.busy.CompareAndSwap(0, retiredBusy) {
		return false
	}
	p.ended.Store(true)
	return true
}

// retired reports whether the pool was retired. It may tell false for a
// moment after retire: submit finds out then (acquire fails).
func (p *pool) retired() bool { return p.ended.Load() }

// size reports the tasks running and the tasks queued.
func (p *pool) size() (running, queued int) {
	return int(p.active()), int(p.queued.Load())
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
