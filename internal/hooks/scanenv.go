package hooks

import (
	"context"
	"fmt"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/scan"
)

// scanText adapts an internal/scan Scanner to TextScanner: tool output is
// scanned as remote content and findings of at least min severity count.
type scanText struct {
	s   scan.Scanner
	min scan.Severity
}

func (a scanText) ScanText(ctx context.Context, text string) ([]Finding, error) {
	fs, err := a.s.Scan(ctx, []byte(text), scan.Meta{Path: "tool-output", Origin: scan.Remote, Kind: "other"})
	if err != nil {
		return nil, fmt.Errorf("%s scanner: %w", a.s.Name(), err)
	}
	var out []Finding
	for _, f := range fs {
		if f.Severity >= a.min {
			out = append(out, Finding{Rule: f.Rule, Message: f.Message})
		}
	}
	return out, nil
}

// NewEnv returns the production hook environment: getenv plus the
// internal/scan detectors (secrets: gitleaks rules; prompt injection;
// unicode) in place of the built-in fallbacks. Findings of warning
// severity and above count.
//
// The secrets rule set is loaded on first use, so hooks that do not scan
// for secrets do not pay for it.
func NewEnv(getenv func(string) string) *Env {
	return &Env{
		Getenv:    getenv,
		Secrets:   &lazySecrets{},
		Injection: scanText{scan.NewInjectionScanner(), scan.Warning},
		Unicode:   scanText{scan.NewUnicodeScanner(), scan.Warning},
	}
}

type lazySecrets struct {
	once sync.Once
	s    scanText
	err  error
}

func (l *lazySecrets) ScanText(ctx context.Context, text string) ([]Finding, error) {
	l.once.Do(func() {
		sec, err := scan.NewSecretsScanner()
		if err != nil {
			l.err = fmt.Errorf("loading the secrets scanner: %w", err)
			return
		}
		l.s = scanText{sec, scan.Warning}
	})
	if l.err != nil {
		return nil, l.err
	}
	return l.s.ScanText(ctx, text)
}
