package limit

import (
	"fmt"
	"io"
)

// TooLargeError reports a read that went over its bound.
type TooLargeError struct {
	Max int64 // the bound, in bytes
}

func (e *TooLargeError) Error() string { return fmt.Sprintf("larger than %d bytes", e.Max) }

// ReadAll reads r to its end, or fails with a *TooLargeError once r yields
// more than max bytes (it reads at most max+1).
func ReadAll(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return data, nil
}

// ReadFile opens name with open (os.Open, an *os.Root's Open, an fs.FS's
// Open), reads it with ReadAll and closes it. The open error is returned as
// open reports it (it names the file); a read error or a *TooLargeError is
// wrapped as "NAME: ...".
func ReadFile[F io.ReadCloser](open func(string) (F, error), name string, max int64) ([]byte, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := ReadAll(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
