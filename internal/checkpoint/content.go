package checkpoint

import "errors"

// Content is the content of a recorded file state: a rewind preview
// reads the few small files it puts in words (git's HEAD and refs).
func (s *Store) Content(f File) ([]byte, error) {
	if f.Absent || f.Dir || f.Link || f.Hash == "" {
		return nil, errors.New("no content recorded")
	}
	return s.readBlob(f.Hash)
}

// Add counts one action of a plan in the summary.
func (s *Summary) Add(a Action) { s.add(a) }
