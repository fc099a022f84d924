package sessionlog

import (
	"fmt"
	"slices"
)

// Surface is the ordered list of surface seqs plus a replace generation that
// moves whenever a replacement rewrites history. It holds no links and no
// seq→position map: one []int is the only representation.
type Surface struct {
	seqs []int
	gen  int
}

// Seqs returns the surface in order. The slice is shared: do not modify it.
func (s *Surface) Seqs() []int { return s.seqs }

// Len is the number of surface entries.
func (s *Surface) Len() int { return len(s.seqs) }

// Gen is the replace generation: it changes on every replacement.
func (s *Surface) Gen() int { return s.gen }

// Index returns the position of seq on the surface, or -1.
func (s *Surface) Index(seq int) int { return slices.Index(s.seqs, seq) }

func (s *Surface) push(seq int) { s.seqs = append(s.seqs, seq) }

// span returns the positions of start and end, checking both are on the
// surface and in order.
func (s *Surface) span(start, end int) (int, int, error) {
	i := s.Index(start)
	if i < 0 {
		return 0, 0, fmt.Errorf("replace start %d is not on the surface", start)
	}
	j := s.Index(end)
	if j < 0 {
		return 0, 0, fmt.Errorf("replace end %d is not on the surface", end)
	}
	if i > j {
		return 0, 0, fmt.Errorf("replace start %d comes after end %d on the surface", start, end)
	}
	return i, j, nil
}

// replace swaps positions i…j for seq and bumps the generation.
func (s *Surface) replace(i, j, seq int) {
	s.seqs = slices.Replace(s.seqs, i, j+1, seq)
	s.gen++
}

// Replacement records what one replace event shadowed.
type Replacement struct {
	Seq      int   `json:"seq"`
	Start    int   `json:"start"`
	End      int   `json:"end"`
	Shadowed []int `json:"shadowed"`
}

// Fold is the complete read of a log's surface: the live seq list plus every
// replacement with the seqs it shadowed.
type Fold struct {
	Seqs         []int         `json:"surface"`
	Replacements []Replacement `json:"replacements"`
}

// FoldSurface replays the surface ops of events (assumed valid) and returns
// the surface with replacement metadata. The incremental Log keeps none of
// this history; inspection tools call FoldSurface instead.
func FoldSurface(events []Event) (Fold, error) {
	var s Surface
	f := Fold{Replacements: []Replacement{}}
	for i := range events {
		e := &events[i]
		if e.SurfaceOp == nil || !IsSurfaceType(e.Type) {
			continue
		}
		if !e.SurfaceOp.Replace {
			s.push(e.Seq)
			continue
		}
		a, b, err := s.span(e.SurfaceOp.Start, e.SurfaceOp.End)
		if err != nil {
			return Fold{}, invalidf(e, "%v", err)
		}
		f.Replacements = append(f.Replacements, Replacement{
			Seq: e.Seq, Start: e.SurfaceOp.Start, End: e.SurfaceOp.End,
			Shadowed: slices.Clone(s.seqs[a : b+1]),
		})
		s.replace(a, b, e.Seq)
	}
	f.Seqs = slices.Clone(s.seqs)
	if f.Seqs == nil {
		f.Seqs = []int{}
	}
	return f, nil
}
