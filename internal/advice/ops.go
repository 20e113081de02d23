package advice

import "github.com/tracegap/tracegap/internal/analyze"

// opFixes are the fixes of the known op costs (analyze.KnownCosts), with
// the setting each changes.
var opFixes = map[string]struct {
	fix     string
	setting analyze.Setting
}{
	"zero_grad":      {"Drop gradients instead of zeroing them: optimizer.zero_grad(set_to_none=True) (the default from PyTorch 2.0) launches nothing where zeroing launches a kernel per parameter.", analyze.Setting{Name: "zero_grad.set_to_none", Value: "True"}},
	"optimizer.step": {"Run the optimizer step as a few fused kernels: a fused or foreach optimizer (torch.optim.AdamW(..., fused=True) or foreach=True); an optimizer that works on the CPU (Shampoo's preconditioner, say) belongs on the device or off the step.", analyze.Setting{Name: "optimizer.fused", Value: "True"}},
	"collate":        {"Collate in the loader's workers, not on the training thread: DataLoader(num_workers>0), and keep collate_fn to stacking tensors.", analyze.Setting{Name: "DataLoader.num_workers", Value: ">0"}},
}

// opFix gives each known op cost of r its fix and setting.
func opFix(r *analyze.Result) {
	for i := range r.Ops {
		o := &r.Ops[i]
		if x, ok := opFixes[o.Known]; ok {
			set := x.setting
			o.Fix, o.Setting = x.fix, &set
		}
	}
}
