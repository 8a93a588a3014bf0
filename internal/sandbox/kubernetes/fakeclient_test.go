package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeClient adapts client-go's fake clientset to Client.
type fakeClient struct{ cs *fake.Clientset }

func (f fakeClient) CreatePod(ctx context.Context, p *corev1.Pod) error {
	_, err := f.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	return err
}

func (f fakeClient) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return f.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

func (f fakeClient) ListPods(ctx context.Context, ns, sel string) ([]corev1.Pod, error) {
	l, err := f.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (f fakeClient) DeletePod(ctx context.Context, ns, name string) error {
	zero := int64(0)
	return f.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

func (f fakeClient) CreateNetworkPolicy(ctx context.Context, np *networkingv1.NetworkPolicy) error {
	_, err := f.cs.NetworkingV1().NetworkPolicies(np.Namespace).Create(ctx, np, metav1.CreateOptions{})
	return err
}

func (f fakeClient) ListNetworkPolicies(ctx context.Context, ns, sel string) ([]networkingv1.NetworkPolicy, error) {
	l, err := f.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (f fakeClient) DeleteNetworkPolicy(ctx context.Context, ns, name string) error {
	return f.cs.NetworkingV1().NetworkPolicies(ns).Delete(ctx, name, metav1.DeleteOptions{})
}
