package browsertest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserCtx is the running browser, shared by the tests (each opens its
// own tab); nil when there is no chromium.
var browserCtx context.Context

// missing says why there is no browser.
var missing string

// The window size: wide enough for the timeline's labels, the size of the
// screenshots in docs/.
const winW, winH = 1400, 900

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runWithBrowser(m))
}

func runWithBrowser(m *testing.M) int {
	if testing.Short() {
		missing = "the browser tests run without -short"
		return m.Run()
	}
	path := chromePath()
	if path == "" {
		missing = "no chromium: install Debian's chromium (apt-get install -y chromium) or set $CHROME"
		return m.Run()
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(winW, winH),
		chromedp.Flag("hide-scrollbars", true), chromedp.Flag("font-render-hinting", "none"))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	if err := chromedp.Run(bctx); err != nil { // starts the browser
		missing = fmt.Sprintf("starting %s: %v", path, err)
		return m.Run()
	}
	browserCtx = bctx
	return m.Run()
}

func chromePath() string {
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// tab opens a browser tab for one test, closed when it ends. Without a
// browser the test skips, or fails under CI.
func tab(t *testing.T) context.Context {
	t.Helper()
	if browserCtx == nil {
		if os.Getenv("CI") == "true" && !testing.Short() {
			t.Fatalf("browser tests must run in CI: %s", missing)
		}
		t.Skip(missing)
	}
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancelT)
	return ctx
}

// run runs browser actions, failing the test on error.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// screenshot saves the tab's viewport as docs/name.png when
// TRACEGAP_SCREENSHOTS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("TRACEGAP_SCREENSHOTS") != "1" {
		return
	}
	var png []byte
	run(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join("..", "..", "docs", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
