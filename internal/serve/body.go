package serve

import (
	"io"
	"net/http"
	"time"
)

// pacedBody reads an upload's body within its deadline and at no less than
// a minimum mean rate, so that a client trickling bytes is cut off soon
// instead of holding its connection and temporary file for as long as the
// whole request may take. Before each read it sets the connection's read
// deadline to the moment the bytes received so far would fall below the
// rate (after a grace period for the connection to get going), or the
// upload's deadline if that is sooner.
type pacedBody struct {
	r        io.ReadCloser
	rc       *http.ResponseController
	start    time.Time
	grace    time.Duration
	rate     int64 // bytes per second; 0: no minimum
	deadline time.Time
	n        int64
}

// limitBody refuses an upload whose declared length is over the cap, and
// puts its body under the cap, the minimum rate and the deadline. The
// caller calls done once the body is read.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) (*pacedBody, error) {
	if r.ContentLength > s.cfg.MaxUpload {
		return nil, errorf(http.StatusRequestEntityTooLarge, "upload of %d bytes is larger than %d bytes (the server's --max-upload)", r.ContentLength, s.cfg.MaxUpload)
	}
	now := time.Now()
	p := &pacedBody{
		r: r.Body, rc: http.NewResponseController(w), start: now,
		grace: s.cfg.UploadGrace, rate: s.cfg.MinUploadRate, deadline: now.Add(s.cfg.UploadTimeout),
	}
	r.Body = http.MaxBytesReader(w, p, s.cfg.MaxUpload)
	return p, nil
}

func (p *pacedBody) Read(b []byte) (int, error) {
	p.rc.SetReadDeadline(p.next()) // not supported: the server's ReadTimeout holds
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// next is when the next byte must have arrived.
func (p *pacedBody) next() time.Time {
	if p.rate <= 0 {
		return p.deadline
	}
	due := p.start.Add(p.grace + time.Duration(float64(p.n+1)/float64(p.rate)*float64(time.Second)))
	if due.After(p.deadline) {
		return p.deadline
	}
	return due
}

// done lifts the deadline once the body is read in full, so that the
// server's watch for a client going away (which cancels the request's
// context) does not take an analysis outlasting the deadline for one.
func (p *pacedBody) done() { p.rc.SetReadDeadline(time.Time{}) }

func (p *pacedBody) Close() error { return p.r.Close() }
