package actors

import (
	"math"
	"slices"
	"strconv"

	"github.com/flinksim/flinksim/messages"
	"github.com/flinksim/flinksim/sim/checkpoint"
	"github.com/flinksim/flinksim/sim/config"
	"github.com/flinksim/flinksim/sim/eventlog"
	"github.com/flinksim/flinksim/sim/heartbeat"
	"github.com/flinksim/flinksim/sim/jobgraph"
	"github.com/flinksim/flinksim/sim/kafka"
	"github.com/flinksim/flinksim/sim/keygroup"
	"github.com/flinksim/flinksim/sim/restart"
	"github.com/flinksim/flinksim/sim/vt"
	"github.com/flinksim/flinksim/sim/watermark"
)

// NoResourceAvailableMessage is the text of the exception the JobMaster's
// slot pool fails a job with when its slot request bulk times out
// (org.apache.flink.runtime.jobmaster.slotpool.PhysicalSlotRequestBulkCheckerImpl).
const NoResourceAvailableMessage = "org.apache.flink.runtime.jobmanager.scheduler.NoResourceAvailableException: " +
	"Slot request bulk is not fulfillable! Could not allocate the required slot within slot request timeout"

type offeredSlot struct {
	tm    string
	index int32
	alloc string
}

// JobManager is the JobMaster of the one job (DefaultScheduler with one
// slot-sharing group and one pipelined region) together with the Kafka
// source's SplitEnumerator, which Flink runs in the JobManager's
// SourceCoordinator (KafkaSourceEnumerator).
type JobManager struct {
	cfg     *config.Config
	graph   jobgraph.JobGraph
	bounded bool
	status  string
	slots   []offeredSlot
	tasks   map[string]string // execution id -> last state
	order   []string          // execution ids in deployment order
	deploy  bool

	// the split enumerator
	startOffsets map[int32]int64
	stopOffsets  map[int32]int64 // bounded only
	readers      []int32         // registered, waiting for offsets
	haveStart    bool
	haveStop     bool
	alignment    *watermark.AlignmentGroup // nil: no watermark alignment
	lastMax      int64

	// failover (see jobmanager_failover.go)
	attempt  int                           // execution attempt of the current deployment
	restarts int                           // restarts so far
	strategy restart.Strategy              // restart strategy
	monitors map[string]*heartbeat.Monitor // heartbeat monitor per task manager with slots
	location map[string]string             // execution id -> task manager
	lost     map[string]bool               // task managers whose heartbeat timed out

	// checkpoints (see jobmanager_checkpoint.go)
	coord         *checkpoint.Coordinator
	pendingStates map[int64]map[string]*messages.TaskStateSnapshot // pending checkpoint -> task -> state
	taskStates    map[string]*messages.TaskStateSnapshot           // task -> state of its last acknowledged snapshot
	latest        *savedState                                      // latest completed checkpoint
	savepoint     *savedState                                      // latest completed savepoint
	restoreFrom   *savedState                                      // what the next deployment restores
	ckTimerSet    bool
	ckTimerAt     int64               // ms
	rescaleTo     int                 // parallelism of the job to start after the stop-with-savepoint (0: none)
	reconfig      *messages.Setting   // the setting of the job to start after the stop-with-savepoint (nil: none)
	overrides     []*messages.Setting // the job's configuration changed by set actions, shipped with every deployment
	rescaleMaxP   int                 // its configured max parallelism (0: not configured)
	jobs          int                 // jobs submitted from a savepoint so far (each gets a new JobID)
	ended         bool                // the run was told to end
}

// jobID is the current job's JobID: job-1, then job-2 ... for each job
// started from a savepoint (a resubmitted job is a new job in Flink).
func (j *JobManager) jobID() string {
	if j.jobs == 0 {
		return JobID
	}
	return "job-" + strconv.Itoa(j.jobs+1)
}

// NewJobManager returns the JobManager for graph. bounded makes the source
// stop at the end offsets it finds at start (KafkaSource.setBounded(latest)).
func NewJobManager(cfg *config.Config, graph jobgraph.JobGraph, bounded bool) *JobManager {
	return &JobManager{cfg: cfg, graph: graph, bounded: bounded, tasks: map[string]string{},
		monitors: map[string]*heartbeat.Monitor{}, location: map[string]string{}, lost: map[string]bool{}}
}

const (
	reqStartOffsets = 1
	reqStopOffsets  = 2
	reqOutputView   = 3 // the sink topic's end offset where a rescaled job's output view starts
)

// Receive implements Component. When the job is in a terminal status at
// the end of a delivery (a rescale's FINISHED is followed by the new job's
// RUNNING in the same delivery), the run ends.
func (j *JobManager) Receive(o *Out, env *messages.Envelope) {
	j.receive(o, env)
	if j.terminal() && !j.ended {
		j.ended = true
		o.EndRun()
	}
}

func (j *JobManager) receive(o *Out, env *messages.Envelope) {
	switch b := env.Body.(type) {
	case *messages.Envelope_Start:
		j.start(o)
	case *messages.Envelope_OfferSlots:
		j.offerSlots(o, env.From, b.OfferSlots)
	case *messages.Envelope_Timer:
		switch b.Timer.Kind {
		case timerAlignment:
			j.announceAlignment(o)
			return
		case timerHeartbeat:
			j.heartbeat(o, true)
			return
		case timerHeartbeatCheck:
			j.heartbeat(o, false)
			return
		case timerRestart:
			j.restart(o)
			return
		case timerCheckpoint:
			if j.coord != nil {
				j.checkpointDuty(o, b.Timer.Arg)
			}
			return
		}
		if b.Timer.Kind == timerSlotRequestTimeout && b.Timer.Arg == int64(j.attempt) && !j.deploy && j.status == "RUNNING" {
			o.Log(eventlog.KindNoResourceAvailable, messages.Int("slots_needed", int64(j.graph.SlotsNeeded)),
				messages.Int("slots_offered", int64(len(j.slots))),
				messages.Str("slot_request_timeout", config.FormatDuration(j.cfg.SlotRequestTimeout)),
				messages.Str("exception", NoResourceAvailableMessage))
			// a task failure like any other: the restart strategy decides
			// (DefaultScheduler.handleTaskFailure); without restarts the
			// job fails
			j.failover(o, NoResourceAvailableMessage)
		}
	case *messages.Envelope_ReportedWatermarkEvent:
		if j.alignment != nil {
			m := b.ReportedWatermarkEvent
			j.alignment.ReportWatermark(jobgraph.VertexSource, int(m.SubtaskIndex), m.Watermark)
		}
	case *messages.Envelope_TaskExecutionState:
		j.taskState(o, b.TaskExecutionState)
	case *messages.Envelope_ListOffsetsResult:
		j.offsets(o, b.ListOffsetsResult)
	case *messages.Envelope_ReaderRegistration:
		j.readers = append(j.readers, b.ReaderRegistration.SubtaskIndex)
		j.assignSplits(o)
	case *messages.Envelope_HeartbeatResponse:
		if m := j.monitors[b.HeartbeatResponse.TaskManagerId]; m != nil {
			m.ReportHeartbeat(vt.Millis(o.Now()))
		}
	case *messages.Envelope_Action:
		j.action(o, b.Action.Text)
	case *messages.Envelope_AcknowledgeCheckpoint:
		j.acknowledge(o, b.AcknowledgeCheckpoint)
	case *messages.Envelope_DeclineCheckpoint:
		j.decline(o, b.DeclineCheckpoint)
	case *messages.Envelope_EndOfRun:
		o.Log(eventlog.KindFinal, messages.Str("job_status", j.status), messages.Int("restarts", int64(j.restarts)))
	}
}

// announceAlignment is the SourceCoordinator's periodic announcement of
// the alignment group's max allowed watermark (group minimum + max drift)
// to every reader (WatermarkAlignmentEvent).
func (j *JobManager) announceAlignment(o *Out) {
	if j.status != "RUNNING" {
		return
	}
	o.Timer(vt.FromDuration(j.cfg.AlignmentUpdateInterval), timerAlignment, 0)
	for _, a := range j.alignment.Tick(vt.Millis(o.Now())) {
		if a.MaxAllowedWatermark != j.lastMax {
			j.lastMax = a.MaxAllowedWatermark
			o.Log(eventlog.KindAlignment, messages.Str("group", j.cfg.AlignmentGroup),
				messages.Int("combined_watermark", j.alignment.CombinedWatermark()),
				messages.Int("max_allowed_watermark", a.MaxAllowedWatermark))
		}
		src, _ := j.graph.Vertex(jobgraph.VertexSource)
		for i := 0; i < src.Parallelism; i++ {
			o.Send(j.name(jobgraph.VertexSource, i), rpcLatency(j.cfg),
				&messages.Envelope_WatermarkAlignmentEvent{WatermarkAlignmentEvent: &messages.WatermarkAlignmentEvent{MaxWatermark: a.MaxAllowedWatermark}})
		}
	}
}

func (j *JobManager) setStatus(o *Out, status, cause string) {
	if j.status == status {
		return
	}
	fields := []*messages.Field{messages.Str("job_id", j.jobID()), messages.Str("status", status)}
	if j.status != "" {
		fields = append(fields, messages.Str("previous", j.status))
	}
	if cause != "" {
		fields = append(fields, messages.Str("cause", cause))
	}
	was := j.status
	j.status = status
	o.Log(eventlog.KindJobStatus, fields...)
	if was == "RUNNING" {
		j.jobLeftRunning(o)
	}
	if status == "RUNNING" {
		j.jobRunning(o)
	}
}

func (j *JobManager) start(o *Out) {
	g := j.graph
	var vs []string
	for _, v := range g.Vertices {
		vs = append(vs, `{"id":`+jsonString(v.ID)+`,"name":`+jsonString(v.Name)+`,"parallelism":`+
			strconv.Itoa(v.Parallelism)+`,"operators":`+jsonStrings(v.Operators)+`}`)
	}
	var es []string
	for _, e := range g.Edges {
		es = append(es, `{"from":`+jsonString(e.From)+`,"to":`+jsonString(e.To)+`,"partitioner":`+jsonString(e.Partitioner)+`}`)
	}
	j.startCoordinator(o)
	o.Log(eventlog.KindJobGraph, messages.Str("job_name", g.JobName), messages.Raw("vertices", "["+joinRaw(vs)+"]"),
		messages.Raw("edges", "["+joinRaw(es)+"]"), messages.Int("max_parallelism", int64(g.MaxParallelism)),
		messages.Int("slots_needed", int64(g.SlotsNeeded)), messages.Bool("bounded", j.bounded))
	j.setStatus(o, "CREATED", "")
	// DefaultScheduler.startScheduling: the job is RUNNING while its
	// executions wait in SCHEDULED for slots.
	j.setStatus(o, "RUNNING", "")
	for _, v := range g.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			o.Log(eventlog.KindTaskState, messages.Str("task", jobgraph.SubtaskName(v.ID, i, 0)),
				messages.Str("state", "SCHEDULED"), messages.Str("note", "waiting for a slot"))
		}
	}
	o.Send(ResourceManagerName, rpcLatency(j.cfg), &messages.Envelope_DeclareResourceRequirements{
		DeclareResourceRequirements: &messages.DeclareResourceRequirements{JobId: j.jobID(), NumSlots: int32(g.SlotsNeeded)}})
	o.Timer(vt.FromDuration(j.cfg.SlotRequestTimeout), timerSlotRequestTimeout, 0)
	j.startFailover(o)
	if j.cfg.AlignmentGroup != "" && j.cfg.TimeCharacteristic != "processing-time" {
		g, err := watermark.NewAlignmentGroup(j.cfg.AlignmentMaxDrift.Milliseconds(), j.cfg.AlignmentUpdateInterval.Milliseconds())
		if err == nil {
			j.alignment = g
			j.lastMax = math.MinInt64
			g.Start(vt.Millis(o.Now()))
			o.Timer(vt.FromDuration(j.cfg.AlignmentUpdateInterval), timerAlignment, 0)
		}
	}
	// the source coordinator resolves the starting (and, bounded, stopping)
	// offsets of every partition (KafkaSourceEnumerator with its
	// OffsetsInitializers)
	o.Send(KafkaName, rpcLatency(j.cfg), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
		Topic: j.cfg.SourceTopic, Spec: j.cfg.StartingOffsets, RequestId: reqStartOffsets}})
	if j.bounded {
		// KafkaSource.setBounded(OffsetsInitializer.latest()); when the
		// events are paced by event time the file's final offsets are
		// given explicitly instead (OffsetsInitializer.offsets(...)), so
		// the job reads the whole file as it arrives
		spec := "latest"
		if j.cfg.EventsPace == "event-time" {
			spec = "final"
		}
		o.Send(KafkaName, rpcLatency(j.cfg), &messages.Envelope_ListOffsets{ListOffsets: &messages.ListOffsets{
			Topic: j.cfg.SourceTopic, Spec: spec, RequestId: reqStopOffsets}})
	}
}

func joinRaw(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += ","
		}
		s += p
	}
	return s
}

func (j *JobManager) offerSlots(o *Out, from string, m *messages.OfferSlots) {
	var accepted []string
	for _, off := range m.Offers {
		if j.terminal() {
			continue
		}
		// the slot pool keeps every slot offered while the job lives, also
		// spare ones (a slot offered to a deployed or restarting job is used
		// by the next deployment)
		j.slots = append(j.slots, offeredSlot{tm: m.TaskManagerId, index: off.SlotIndex, alloc: off.AllocationId})
		accepted = append(accepted, off.AllocationId)
		if j.monitors[m.TaskManagerId] == nil {
			// JobMaster.registerTaskManager starts monitoring its heartbeat
			// (again, for one whose heartbeat timed out behind a network cut)
			j.monitors[m.TaskManagerId] = heartbeat.NewMonitor(j.cfg.HeartbeatTimeout.Milliseconds(), vt.Millis(o.Now()))
			delete(j.lost, m.TaskManagerId)
		}
	}
	o.Send(from, rpcLatency(j.cfg), &messages.Envelope_SlotOfferResponse{SlotOfferResponse: &messages.SlotOfferResponse{Accepted: accepted}})
	if !j.deploy && len(j.slots) >= j.graph.SlotsNeeded && j.status == "RUNNING" {
		j.deployAll(o)
	}
}

// deployAll puts subtask i of every vertex into the i-th slot (slot
// sharing), slots ordered by task manager and slot index.
func (j *JobManager) deployAll(o *Out) {
	j.deploy = true
	slices.SortFunc(j.slots, func(a, b offeredSlot) int {
		if a.tm != b.tm {
			if len(a.tm) != len(b.tm) {
				return len(a.tm) - len(b.tm)
			}
			if a.tm < b.tm {
				return -1
			}
			return 1
		}
		return int(a.index - b.index)
	})
	g := j.graph
	location := j.location // subtask -> task manager
	clear(location)
	j.order = j.order[:0]
	for _, v := range g.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			location[j.name(v.ID, i)] = j.slots[i].tm
		}
	}
	for _, v := range g.Vertices {
		var in, out *jobgraph.Edge
		for k := range g.Edges {
			if g.Edges[k].To == v.ID {
				in = &g.Edges[k]
			}
			if g.Edges[k].From == v.ID {
				out = &g.Edges[k]
			}
		}
		for i := 0; i < v.Parallelism; i++ {
			name := j.name(v.ID, i)
			st := &messages.SubmitTask{ExecutionId: name, JobVertex: v.ID, TaskName: v.Name, SubtaskIndex: int32(i),
				Parallelism: int32(v.Parallelism), MaxParallelism: int32(g.MaxParallelism), AllocationId: j.slots[i].alloc,
				Chain: v.Operators, Attempt: int32(j.attempt), Checkpointing: j.cfg.CheckpointInterval > 0,
				JobConfiguration: j.overrides}
			if r := j.restoreFrom; r != nil {
				st.Restore = restoreFor(r, v.ID, i, v.Parallelism)
				st.RestoreCheckpointId = r.id
				st.RestoreParallelism = int32(r.parallelism[v.ID])
			}
			if in != nil {
				pv, _ := g.Vertex(in.From)
				gate := &messages.InputGateDeployment{}
				for p := 0; p < pv.Parallelism; p++ {
					pn := j.name(pv.ID, p)
					gate.Producers = append(gate.Producers, pn)
					gate.ProducerLocations = append(gate.ProducerLocations, location[pn])
				}
				if in.Partitioner == jobgraph.PartitionForward {
					gate.Producers = gate.Producers[i : i+1]
					gate.ProducerLocations = gate.ProducerLocations[i : i+1]
				}
				st.InputGate = gate
			}
			if out != nil {
				cv, _ := g.Vertex(out.To)
				rp := &messages.ResultPartitionDeployment{Partitioner: out.Partitioner}
				if out.Partitioner == jobgraph.PartitionForward {
					rp.Consumers = []string{j.name(cv.ID, i)}
				} else {
					for c := 0; c < cv.Parallelism; c++ {
						rp.Consumers = append(rp.Consumers, j.name(cv.ID, c))
					}
				}
				for _, c := range rp.Consumers {
					rp.ConsumerLocations = append(rp.ConsumerLocations, location[c])
				}
				rp.NumSubpartitions = int32(len(rp.Consumers))
				st.ResultPartition = rp
			}
			if v.ID != jobgraph.VertexSource {
				r, err := keygroup.RangeForOperatorIndex(g.MaxParallelism, v.Parallelism, i)
				if err == nil {
					st.KeyGroupStart, st.KeyGroupEnd = int32(r.Start), int32(r.End)
				}
			}
			j.tasks[name] = "SCHEDULED"
			j.order = append(j.order, name)
			o.Log(eventlog.KindSubmitTask, messages.Str("task", name), messages.Str("task_name", v.Name), messages.Int("attempt", int64(j.attempt)),
				messages.Str("task_manager", j.slots[i].tm), messages.Int("slot", int64(j.slots[i].index)),
				messages.Str("allocation_id", j.slots[i].alloc))
			o.Send(j.slots[i].tm, rpcLatency(j.cfg), &messages.Envelope_SubmitTask{SubmitTask: st})
		}
	}
}

func (j *JobManager) taskState(o *Out, m *messages.TaskExecutionState) {
	if _, current := j.location[m.ExecutionId]; !current {
		return // a report of an earlier attempt
	}
	j.tasks[m.ExecutionId] = m.State
	if j.coord != nil {
		// every task runs, or finished after its final checkpoint
		running, finished := len(j.order) == j.numTasks(), 0
		for _, name := range j.order {
			running = running && (j.tasks[name] == "RUNNING" || j.tasks[name] == "FINISHED")
			if j.tasks[name] == "FINISHED" {
				finished++
			}
		}
		running = running && finished < len(j.order)
		j.coord.SetTasksRunning(running)
	}
	fields := []*messages.Field{messages.Str("task", m.ExecutionId), messages.Str("state", m.State)}
	if m.Reason != "" {
		fields = append(fields, messages.Str("reason", m.Reason))
	}
	o.Log(eventlog.KindTaskState, fields...)
	switch m.State {
	case "FAILED":
		j.failover(o, m.Reason)
	case "FINISHED":
		for _, name := range j.order {
			if j.tasks[name] != "FINISHED" {
				return
			}
		}
		j.setStatus(o, "FINISHED", "")
		if j.rescaleTo > 0 || j.reconfig != nil {
			j.startRescaled(o)
		}
	}
}

func (j *JobManager) offsets(o *Out, m *messages.ListOffsetsResult) {
	if m.RequestId == reqOutputView {
		// a job started from a savepoint writes to a fresh view of the
		// output: what a consumer starting at the sink's end now reads
		for _, po := range m.Offsets {
			o.Log(eventlog.KindOutputView, messages.Str("topic", m.Topic), messages.Int("from_offset", po.Offset))
		}
		return
	}
	mp := map[int32]int64{}
	for _, po := range m.Offsets {
		mp[po.Partition] = po.Offset
	}
	if m.RequestId == reqStopOffsets {
		j.stopOffsets, j.haveStop = mp, true
	} else {
		j.startOffsets, j.haveStart = mp, true
	}
	j.assignSplits(o)
}

// assignSplits gives each registered reader the partitions that
// KafkaSourceEnumerator.getSplitOwner assigns it, once the offsets are known;
// in bounded mode it then signals no more splits.
func (j *JobManager) assignSplits(o *Out) {
	if !j.haveStart || (j.bounded && !j.haveStop) {
		return
	}
	src, _ := j.graph.Vertex(jobgraph.VertexSource)
	readers := j.readers
	j.readers = nil
	for _, r := range readers {
		var splits []*messages.KafkaSplit
		var parts []int64
		for p := 0; p < j.cfg.SourcePartitions; p++ {
			if kafka.SplitOwner(j.cfg.SourceTopic, p, src.Parallelism) != int(r) {
				continue
			}
			sp := &messages.KafkaSplit{Topic: j.cfg.SourceTopic, Partition: int32(p),
				StartingOffset: j.startOffsets[int32(p)], StoppingOffset: -1}
			if j.bounded {
				sp.StoppingOffset = j.stopOffsets[int32(p)]
			}
			splits = append(splits, sp)
			parts = append(parts, int64(p))
		}
		reader := j.name(jobgraph.VertexSource, int(r))
		o.Log(eventlog.KindSplitsAssigned, messages.Str("reader", reader), messages.Raw("partitions", jsonInts(parts)))
		if len(splits) == 0 && !j.bounded {
			o.Log(eventlog.KindReaderNoSplits, messages.Str("reader", reader),
				messages.Str("note", "a reader without splits does not go idle by itself: it holds every downstream watermark at Long.MIN_VALUE unless withIdleness is set"))
		}
		o.Send(reader, rpcLatency(j.cfg), &messages.Envelope_AddSplits{AddSplits: &messages.AddSplits{Splits: splits}})
		if j.bounded {
			o.Send(reader, rpcLatency(j.cfg), &messages.Envelope_NoMoreSplits{NoMoreSplits: &messages.NoMoreSplits{}})
		}
	}
}
