package cli

import (
	"fmt"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/gateway"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/kubernetes" // registers "kubernetes"
)

// kubernetesOptions fills o from config.yaml sandbox.kubernetes and reads
// the gateway signing key from the variable signing_key_env names. A key
// is required only when a gateway is configured.
func kubernetesOptions(env *Env, k config.Kubernetes, o *sandbox.Options) error {
	o.Namespace, o.RuntimeClass, o.EgressGateway = k.Namespace, k.RuntimeClass, k.EgressGateway
	if k.Image != "" {
		o.Image = k.Image
	}
	if k.EgressGateway == "" {
		return nil
	}
	name := k.SigningKeyEnv
	if name == "" {
		name = DefaultEgressKeyEnv
	}
	v := env.Getenv(name)
	if v == "" {
		return fmt.Errorf("kubernetes sandbox: $%s (config.yaml sandbox.kubernetes.signing_key_env): not set; it must hold the egress gateway's key", name)
	}
	key, err := gateway.ParseKey(v)
	if err != nil {
		return fmt.Errorf("kubernetes sandbox: $%s: %v", name, err)
	}
	o.SigningKey = key
	return nil
}

// sandboxOptions is a run's SandboxOptions hook: config.yaml's
// sandbox.kubernetes for the kubernetes backend, nothing for the others.
func (env *Env) sandboxOptions(cfg *config.Config, backend string, o *sandbox.Options) error {
	if backend != kubernetes.Name {
		return nil
	}
	return kubernetesOptions(env, cfg.Sandbox.Kubernetes, o)
}

// sandboxDryRun prints the objects a kubernetes run of spec would create.
func sandboxDryRun(env *Env, k config.Kubernetes, spec sandbox.Spec) error {
	objs, err := kubernetes.DryRun(kubernetes.Config{Namespace: k.Namespace, RuntimeClass: k.RuntimeClass, Image: k.Image, EgressGateway: k.EgressGateway}, spec, time.Now())
	if err != nil {
		return err
	}
	y, err := objs.YAML()
	if err != nil {
		return err
	}
	_, err = env.Stdout.Write(y)
	return err
}
