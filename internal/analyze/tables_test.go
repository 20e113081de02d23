package analyze

import "testing"

// TestLoaderKinds: a name of each kind of input pipeline is named as that
// kind, so that no row shadows a later one, and every row has a case here.
func TestLoaderKinds(t *testing.T) {
	tests := []struct{ name, kind string }{
		{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", LoaderSingleProcess},
		{"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", LoaderMultiProcess},
		{"enumerate(DataPipe)#ShufflerIterDataPipe", "DataPipe"},
		{"IteratorGetNext", LoaderTFData},
		{"Iterator::Model::Prefetch", LoaderTFData},
		{"grain_iterator_next", LoaderGrain},
		{"data_loader.py:120 __next__", LoaderGrain},
		{"prefetch.py:450 __next__", LoaderGrainDataset},
		{"multihost_dataloading.py:200 __next__", "MaxText input pipeline"},
		{"load_batch", LoaderAny},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if got := LoaderKindOf(tt.name); got != tt.kind {
			t.Errorf("LoaderKindOf(%q) = %q, want %q", tt.name, got, tt.kind)
		}
		seen[tt.kind] = true
	}
	for _, k := range loaderKinds {
		if !seen[k.name] {
			t.Errorf("loader kind %q has no case in this test", k.name)
		}
	}
}
