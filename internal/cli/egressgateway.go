package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/gateway"
)

// DefaultEgressKeyEnv is the variable the gateway reads its signing key from.
const DefaultEgressKeyEnv = "FULLSEND_EGRESS_KEY"

func newEgressGatewayCmd(env *Env) *cobra.Command {
	var (
		listen, keyEnv string
		private        []string
	)
	cmd := &cobra.Command{
		Use:   "egress-gateway [--listen ADDR] [--key-env NAME]",
		Short: "Serve the egress proxy for Kubernetes sandboxes (per-run signed tokens)",
		Long: `egress-gateway is the allowlisting HTTP/CONNECT proxy that sandbox Pods of
the kubernetes backend reach through their NetworkPolicy. It is stateless:
each request must carry the run's token as proxy credentials
(HTTPS_PROXY=http://run:TOKEN@GATEWAY:3128); the token, signed with the key
in $FULLSEND_EGRESS_KEY (a Secret), holds the run's allowlist and expiry.
A missing, tampered or expired token gets 407; hosts outside the token's
allowlist and internal or cloud metadata addresses get 403. Each decision
is one line on stdout. It runs until SIGTERM.

  fullsend egress-gateway keygen > signing.key   make a key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := gateway.ParseKey(env.Getenv(keyEnv))
			if env.Getenv(keyEnv) == "" {
				err = errors.New("not set (fullsend egress-gateway keygen makes one)")
			}
			if err != nil {
				return fmt.Errorf("egress gateway: $%s: %v", keyEnv, err)
			}
			var priv []netip.Prefix
			for _, p := range private {
				pf, err := netip.ParsePrefix(p)
				if err != nil {
					return usageError{fmt.Errorf("--allow-private-network %q: %v", p, err)}
				}
				priv = append(priv, pf.Masked())
			}
			g, err := gateway.New(gateway.Config{Key: key, AllowedPrivateNetworks: priv, Log: env.Stdout})
			if err != nil {
				return err
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("egress gateway: listen %s: %w", listen, err)
			}
			fmt.Fprintf(env.Stderr, "fullsend: egress gateway listening on %s\n", l.Addr())
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			done := make(chan error, 1)
			go func() { done <- g.Serve(l) }()
			select {
			case <-ctx.Done():
				g.Close()
				<-done
				return nil
			case err := <-done:
				g.Close()
				if err != nil {
					return fmt.Errorf("egress gateway: %w", err)
				}
				return nil
			}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", ":"+strconv.Itoa(gateway.DefaultPort), "listen `ADDR`")
	fl.StringVar(&keyEnv, "key-env", DefaultEgressKeyEnv, "environment variable `NAME` holding the signing key")
	fl.StringArrayVar(&private, "allow-private-network", nil, "internal `CIDR` the gateway may reach (repeatable; e.g. a GitHub Enterprise range)")
	cmd.AddCommand(newEgressKeygenCmd(env))
	return cmd
}

func newEgressKeygenCmd(env *Env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen [-o FILE]",
		Short: "Print a new egress-gateway signing key (base64, 32 random bytes)",
		Long: `keygen prints a new signing key for the egress gateway and the runner
(config.yaml sandbox.kubernetes.signing_key_env names the runner's variable).
With -o it writes FILE (mode 0600, refusing to overwrite one), e.g. for the
kustomize secretGenerator in deploy/kubernetes.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			k, err := gateway.NewKey()
			if err != nil {
				return err
			}
			if out == "" {
				fmt.Fprintln(env.Stdout, k)
				return nil
			}
			f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("egress gateway keygen: %w", err)
			}
			if _, err := fmt.Fprintln(f, k); err != nil {
				f.Close()
				return fmt.Errorf("egress gateway keygen: %s: %w", out, err)
			}
			return f.Close()
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the key to `FILE` (0600) instead of stdout")
	return cmd
}
