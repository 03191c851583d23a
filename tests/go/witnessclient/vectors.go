// The vectors command: roots, consistency and inclusion proofs and a signed checkpoint from Go's
// tlog and note, as known answers for the TypeScript implementation.

package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type vectors struct {
	Entries     []string          `json:"entries"`
	Roots       []string          `json:"roots"`
	Consistency []proofVector     `json:"consistency"`
	Inclusion   []proofVector     `json:"inclusion"`
	Note        map[string]string `json:"note"`
}

type proofVector struct {
	Old   int64    `json:"old,omitempty"`
	Index int64    `json:"index,omitempty"`
	Size  int64    `json:"size"`
	Proof []string `json:"proof"`
}

func encode(hashes []tlog.Hash) []string {
	out := []string{}
	for _, h := range hashes {
		out = append(out, base64.StdEncoding.EncodeToString(h[:]))
	}
	return out
}

func vectorsCommand(args []string) {
	flags := flag.NewFlagSet("vectors", flag.ExitOnError)
	n := flags.Int64("n", 20, "the largest tree size")
	flags.Parse(args)
	t := newTree(entries(int(*n), -1))
	v := vectors{Entries: []string{}, Roots: []string{}, Consistency: []proofVector{}, Inclusion: []proofVector{}}
	for _, e := range t.entries {
		v.Entries = append(v.Entries, string(e))
	}
	for size := int64(0); size <= *n; size++ {
		root := t.root(size)
		v.Roots = append(v.Roots, base64.StdEncoding.EncodeToString(root[:]))
		for old := int64(1); old < size; old++ {
			v.Consistency = append(v.Consistency, proofVector{Old: old, Size: size, Proof: encode(t.proof(old, size))})
		}
		for index := int64(0); index < size; index++ {
			p, err := tlog.ProveRecord(size, index, t)
			if err != nil {
				fail(err)
			}
			v.Inclusion = append(v.Inclusion, proofVector{Index: index, Size: size, Proof: encode(p)})
		}
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, "example.com/go-log")
	if err != nil {
		fail(err)
	}
	signer, _ := note.NewSigner(skey)
	v.Note = map[string]string{"vkey": vkey, "signed": string(sign(checkpointText("example.com/go-log", *n, t.root(*n)), signer))}
	json.NewEncoder(os.Stdout).Encode(v)
}
