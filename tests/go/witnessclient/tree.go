// The in-memory log the commands build with tlog: its stored hashes, roots and proofs, and the
// signed checkpoints that commit to it.

package main

import (
	"encoding/base64"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tree is a log held in memory: its entries and every stored hash, read by tlog's proofs.
type tree struct {
	entries [][]byte
	hashes  []tlog.Hash
}

func (t *tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, index := range indexes {
		if index < 0 || index >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("no stored hash %d", index)
		}
		out[i] = t.hashes[index]
	}
	return out, nil
}

func newTree(entries [][]byte) *tree {
	t := &tree{}
	for i, entry := range entries {
		hashes, err := tlog.StoredHashes(int64(i), entry, t)
		if err != nil {
			panic(err)
		}
		t.entries = append(t.entries, entry)
		t.hashes = append(t.hashes, hashes...)
	}
	return t
}

func (t *tree) root(n int64) tlog.Hash {
	h, err := tlog.TreeHash(n, t)
	if err != nil {
		panic(err)
	}
	return h
}

// proof is the consistency proof from old to n; empty from size 0, between equal sizes, and
// (for a request the witness must refuse) from a larger size.
func (t *tree) proof(old, n int64) tlog.TreeProof {
	if old == 0 || old >= n {
		return nil
	}
	p, err := tlog.ProveTree(n, old, t)
	if err != nil {
		panic(err)
	}
	return p
}

func entries(n int, change int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf("entry %d", i))
		if i == change {
			out[i] = []byte("rewritten")
		}
	}
	return out
}

func checkpointText(origin string, n int64, root tlog.Hash) string {
	return fmt.Sprintf("%s\n%d\n%s\n", origin, n, base64.StdEncoding.EncodeToString(root[:]))
}

func sign(text string, signer note.Signer) []byte {
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	if err != nil {
		panic(err)
	}
	return msg
}
