package acpcmd

import (
	"fmt"
	"io"
	"os"

	"github.com/reel-agent/reel/agent/acpserver"
)

// loadPrices is the price table: the built-in one, overridden and
// extended by the --prices file when one is named. The file is read
// bounded; a file that does not parse fails the start with its error.
func loadPrices(path string) (acpserver.Prices, error) {
	prices := acpserver.DefaultPrices()
	if path == "" {
		return prices, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("--prices %s: %w", path, err)
	}
	o, err := acpserver.ParsePrices(data)
	if err != nil {
		return nil, fmt.Errorf("--prices %s: %w", path, err)
	}
	return prices.WithOverrides(o), nil
}
