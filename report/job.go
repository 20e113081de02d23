package report

// JobReport is the JSON report of a job: the v1 report of the job as one
// run (its verdict, idle breakdown and findings are the job's; devices and
// gaps are every rank's, named "rank N GPU:0", on the job's timeline), with
// the job's own figures in "job" and each rank's in "ranks". The fields
// are documented in docs/report-v1.md.
type JobReport struct {
	Report
	Job   JobSection   `json:"job"`
	Ranks []RankReport `json:"ranks"`
}

// JobSection holds the job's own figures.
type JobSection struct {
	Ranks     int    `json:"ranks"`
	WorldSize int    `json:"world_size"`
	Clock     string `json:"clock"`
	// Collectives counts the collectives matched across ranks in the
	// window's steps.
	Collectives int   `json:"collectives"`
	TransferNs  int64 `json:"transfer_ns"`
	// Wait is the window time the ranks waited in collectives, summed
	// over the ranks, by what held the straggler back.
	Wait WaitSplitV1 `json:"wait"`
	// Rest is the window's time that is neither busy nor idle by cause,
	// averaged over the ranks as the idle breakdown is: with it the
	// window adds up.
	Rest  RestV1    `json:"rest"`
	Steps []JobStep `json:"steps"`
}

// RestV1 is job.Rest on the wire: collective waits that no idle cause
// explains (the straggler computing, or late), and the time outside the
// rank's own stretch.
type RestV1 struct {
	ComputeNs int64 `json:"compute_ns"`
	LateNs    int64 `json:"late_ns"`
	OutsideNs int64 `json:"outside_ns"`
}

// WaitSplitV1 splits a collective wait by what held the straggler back:
// the cause of its device's idle (in-sync, after-sync, input, host,
// untraced), more device work (compute), or lateness carried in from
// before (late).
type WaitSplitV1 struct {
	// Ns is the idle by cause, in the order of CauseKeys ("<key>_ns" in
	// JSON).
	Ns        [NumCauses]int64
	ComputeNs int64
	LateNs    int64
	TotalNs   int64
	Doing     string
}

// JobStep is one step across the ranks. Rank-indexed lists follow
// JobReport.Ranks; ranks are named by their number.
type JobStep struct {
	Num         int64          `json:"num"`
	Name        string         `json:"name"`
	StartNs     int64          `json:"start_ns"`
	EndNs       int64          `json:"end_ns"`
	DurNs       []int64        `json:"dur_ns"`
	Straggler   int            `json:"straggler"`
	Doing       string         `json:"doing"`
	WaitNs      int64          `json:"wait_ns"`
	Rest        RestV1         `json:"rest"`
	Collectives []CollectiveV1 `json:"collectives"`
}

// CollectiveV1 is the k-th collective of a step on every rank.
type CollectiveV1 struct {
	Index      int         `json:"index"`
	Name       string      `json:"name"`
	Straggler  int         `json:"straggler"`
	StartNs    int64       `json:"start_ns"`
	SpreadNs   int64       `json:"spread_ns"`
	WaitNs     []int64     `json:"wait_ns"`
	TransferNs []int64     `json:"transfer_ns"`
	Split      WaitSplitV1 `json:"split"`
}

// RankReport holds one rank's figures in the job and its own v1 report.
type RankReport struct {
	Rank     int    `json:"rank"`
	Path     string `json:"path"`
	OffsetNs int64  `json:"offset_ns"`
	// StepTimeNs is the rank's pace: the mean time from one step to the
	// next.
	StepTimeNs int64 `json:"step_time_ns"`
	BusyNs     int64 `json:"busy_ns"`
	// Idle is the window's idle by cause with the rank's collective waits
	// counted by what held the straggler back; shares are of the rank's
	// window.
	Idle         BreakdownV1 `json:"idle"`
	Wait         WaitSplitV1 `json:"wait"`
	TransferNs   int64       `json:"transfer_ns"`
	InputNs      int64       `json:"input_ns"`
	SyncNs       int64       `json:"sync_ns"`
	Verdict      string      `json:"verdict"`
	VerdictAlone string      `json:"verdict_alone"`
	Straggles    int         `json:"straggles"`
	Report       *Report     `json:"report"`
}
