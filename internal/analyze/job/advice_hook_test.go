package job_test

import (
	"github.com/tracegap/tracegap/internal/advice/jobadvice"
	"github.com/tracegap/tracegap/internal/analyze/job"
)

func init() { job.SetAdviseForTest(jobadvice.Add) }
