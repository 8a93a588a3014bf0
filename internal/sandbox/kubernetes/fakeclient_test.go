package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeClient adapts client-go's fake clientset to Client. Objects go in
// through a strict JSON decode into the k8s.io/api types (a field the API
// does not have fails the call) and come back through a plain one.
type fakeClient struct{ cs *fake.Clientset }

func toK8s[T any](in any) (*T, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var out T
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

func fromK8s[T any](in any) (T, error) {
	var out T
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out, err
}

// apiError turns the fake's StatusError into what the REST client returns.
func apiError(err error) error {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return &APIError{Code: int(st.Code), Reason: string(st.Reason), Message: st.Message}
	}
	return err
}

func (f fakeClient) CreatePod(ctx context.Context, p *Pod) error {
	kp, err := toK8s[corev1.Pod](p)
	if err != nil {
		return err
	}
	_, err = f.cs.CoreV1().Pods(p.Namespace).Create(ctx, kp, metav1.CreateOptions{})
	return apiError(err)
}

func (f fakeClient) GetPod(ctx context.Context, ns, name string) (*Pod, error) {
	kp, err := f.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, apiError(err)
	}
	p, err := fromK8s[Pod](kp)
	return &p, err
}

func (f fakeClient) ListPods(ctx context.Context, ns, sel string) ([]Pod, error) {
	l, err := f.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiError(err)
	}
	return fromK8s[[]Pod](l.Items)
}

func (f fakeClient) DeletePod(ctx context.Context, ns, name string) error {
	zero := int64(0)
	return apiError(f.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
}

func (f fakeClient) CreateNetworkPolicy(ctx context.Context, np *NetworkPolicy) error {
	knp, err := toK8s[networkingv1.NetworkPolicy](np)
	if err != nil {
		return err
	}
	_, err = f.cs.NetworkingV1().NetworkPolicies(np.Namespace).Create(ctx, knp, metav1.CreateOptions{})
	return apiError(err)
}

func (f fakeClient) ListNetworkPolicies(ctx context.Context, ns, sel string) ([]NetworkPolicy, error) {
	l, err := f.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, apiError(err)
	}
	return fromK8s[[]NetworkPolicy](l.Items)
}

func (f fakeClient) DeleteNetworkPolicy(ctx context.Context, ns, name string) error {
	return apiError(f.cs.NetworkingV1().NetworkPolicies(ns).Delete(ctx, name, metav1.DeleteOptions{}))
}
