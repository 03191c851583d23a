// witnessclient drives a C2SP tlog-witness (https://c2sp.org/tlog-witness) the way a log does, with
// Go's golang.org/x/mod/sumdb/tlog for the trees and consistency proofs (tlog.ProveTree) and
// golang.org/x/mod/sumdb/note for signing checkpoints, and checks each cosignature it gets back with
// a note.Verifier written here from https://c2sp.org/tlog-cosignature (key ID type 0x04, the
// message "cosignature/v1\ntime <t>\n" and the checkpoint, a big-endian timestamp before the
// signature). It shares no code with the service's TypeScript.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./tests/go/witnessclient keygen -origin ORIGIN
//	    prints {"skey": ..., "vkey": ...}: a new log key named by the origin
//	... witnessclient run -url PREFIX -skey SKEY -witness VKEY
//	    submits a fixed series of checkpoints to a witness that has never seen the log, and prints
//	    one JSON object per request: {step, old, size, status, content_type, body, cosigned, timestamp}
//	... witnessclient open -file NOTE -log VKEY -witness VKEY [-witness VKEY ...]
//	    opens a signed checkpoint with note.Open, trusting the log's key and the witnesses' keys, and
//	    prints {"origin", "size", "root", "signers": [names whose signatures verified], "timestamps"}
//	    (a signature by an unknown key is ignored, a bad one by a known key fails, as note.Open does)
//	... witnessclient vectors -n N
//	    prints known answers for trees of the entries "entry 0" ... "entry N-1": roots, every
//	    consistency and inclusion proof, and a checkpoint signed by a new key with its vkey
package main

import (
	"errors"
	"fmt"
	"os"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, "witnessclient:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: witnessclient keygen|run|open|vectors [flags]"))
	}
	switch os.Args[1] {
	case "keygen":
		keygen(os.Args[2:])
	case "run":
		run(os.Args[2:])
	case "vectors":
		vectorsCommand(os.Args[2:])
	case "open":
		openCommand(os.Args[2:])
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}
