package analyze_test

import (
	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
)

func init() { analyze.SetAdviseForTest(advice.Add) }
