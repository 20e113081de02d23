// Package browsertest drives tracegap's HTML pages in headless Chromium, as
// a user would: the report's zoom, step links and print layout, and the
// service's upload, list, job and compare pages. The tests need Debian's
// chromium (or $CHROME); they skip without it, except under CI=true, where
// .ci/run installs it and they must run.
//
// With TRACEGAP_SCREENSHOTS=1 the tests write the screenshots shown in
// docs/ and the README; otherwise they leave docs/ alone.
package browsertest
