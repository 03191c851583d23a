// The run command: a fixed series of checkpoint submissions to a witness, good and bad, each
// answer printed and its cosignature checked.

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type result struct {
	Step        string `json:"step"`
	Old         int64  `json:"old"`
	Size        int64  `json:"size"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Cosigned    bool   `json:"cosigned"`
	Timestamp   int64  `json:"timestamp"`
}

var client = &http.Client{Timeout: 20 * time.Second}

func submit(url string, body []byte) (int, string, string) {
	res, err := client.Post(url+"/add-checkpoint", "text/plain", bytes.NewReader(body))
	if err != nil {
		fail(err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(res.Body)
	if err != nil {
		fail(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(answer)
}

func requestBody(old int64, proof []tlog.Hash, signed []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

func run(args []string) {
	flags := flag.NewFlagSet("run", flag.ExitOnError)
	url := flags.String("url", "", "the witness's submission prefix")
	skey := flags.String("skey", "", "the log's note signer key (its name is the origin)")
	witnessVkey := flags.String("witness", "", "the witness's cosignature/v1 vkey")
	flags.Parse(args)
	signer, err := note.NewSigner(*skey)
	if err != nil {
		fail(err)
	}
	witness, err := newCosigner(*witnessVkey)
	if err != nil {
		fail(err)
	}
	origin := signer.Name()
	// Another key under the same name, and a key for an origin the witness does not know.
	impostorSkey, _, _ := note.GenerateKey(rand.Reader, origin)
	impostor, _ := note.NewSigner(impostorSkey)
	strangerSkey, _, _ := note.GenerateKey(rand.Reader, origin+"/unknown")
	stranger, _ := note.NewSigner(strangerSkey)

	log := newTree(entries(64, -1))
	fork := newTree(entries(64, 3))
	checkpoint := func(t *tree, n int64, s note.Signer) []byte {
		return sign(checkpointText(s.Name(), n, t.root(n)), s)
	}
	out := json.NewEncoder(os.Stdout)
	step := func(name string, old, n int64, body []byte, signed []byte) {
		status, contentType, answer := submit(*url, body)
		r := result{Step: name, Old: old, Size: n, Status: status, ContentType: contentType, Body: answer}
		if status == http.StatusOK {
			// The answer joined to the checkpoint is a note the witness's key must have signed.
			opened, err := note.Open(append(append([]byte{}, signed...), answer...), note.VerifierList(witness))
			if err == nil && len(opened.Sigs) == 1 {
				raw, _ := base64.StdEncoding.DecodeString(opened.Sigs[0].Base64)
				r.Cosigned = true
				r.Timestamp = int64(binary.BigEndian.Uint64(raw[4:12]))
			}
		}
		out.Encode(r)
	}
	submitTree := func(name string, t *tree, old, n int64, s note.Signer) {
		signed := checkpoint(t, n, s)
		step(name, old, n, requestBody(old, t.proof(old, n), signed), signed)
	}

	submitTree("unknown origin", log, 0, 10, stranger)
	submitTree("signed by another key", log, 0, 10, impostor)
	signed := checkpoint(log, 10, signer)
	step("proof from size 0", 0, 10, requestBody(0, []tlog.Hash{log.root(5)}, signed), signed)
	submitTree("first checkpoint", log, 0, 10, signer)
	submitTree("old size above size", log, 20, 10, signer)
	submitTree("stale old size", log, 0, 20, signer)
	signed = checkpoint(log, 20, signer)
	bad := log.proof(10, 20)
	bad[0][0] ^= 1
	step("bad proof", 10, 20, requestBody(10, bad, signed), signed)
	signed = checkpoint(fork, 20, signer)
	step("fork", 10, 20, requestBody(10, fork.proof(10, 20), signed), signed)
	signed = checkpoint(log, 20, signer)
	step("64 proof lines", 10, 20, requestBody(10, make([]tlog.Hash, 64), signed), signed)
	step("malformed old line", 10, 20, append([]byte("old 010\n"), requestBody(10, log.proof(10, 20), signed)[len("old 10\n"):]...), signed)
	submitTree("consistent checkpoint", log, 10, 20, signer)
	submitTree("same size, other root", fork, 20, 20, signer)
	submitTree("same checkpoint again", log, 20, 20, signer)
	submitTree("rollback", log, 10, 15, signer)
	submitTree("larger checkpoint", log, 20, 37, signer)
}
