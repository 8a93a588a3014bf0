package kubernetes

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Client is what the backend asks of the API server. NewClient implements
// it with client-go's REST client and a scheme of just core/v1 and
// networking/v1: client-go's typed clientset would link the types of
// every API group (37 MB more fullsend binary, measured). Tests adapt client-go's fake
// clientset to it.
type Client interface {
	CreatePod(ctx context.Context, p *corev1.Pod) error
	GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error)
	ListPods(ctx context.Context, ns, selector string) ([]corev1.Pod, error)
	DeletePod(ctx context.Context, ns, name string) error // no grace period
	CreateNetworkPolicy(ctx context.Context, np *networkingv1.NetworkPolicy) error
	ListNetworkPolicies(ctx context.Context, ns, selector string) ([]networkingv1.NetworkPolicy, error)
	DeleteNetworkPolicy(ctx context.Context, ns, name string) error
}

// codecs is the scheme of core/v1 and networking/v1 with its parameter
// codec, built on first use: every fullsend process links this package,
// and registering the types costs each one at start-up otherwise.
var codecs = sync.OnceValues(func() (*runtime.Scheme, runtime.ParameterCodec) {
	schemeBuilt.Store(true)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := networkingv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return scheme, runtime.NewParameterCodec(scheme)
})

// schemeBuilt tells whether codecs ran (tests check it did not at init).
var schemeBuilt atomic.Bool

func paramCodec() runtime.ParameterCodec {
	_, pc := codecs()
	return pc
}

type restClient struct{ core, net *rest.RESTClient }

// NewClient returns the Client of the cluster rc names. It speaks JSON
// (every API server does; the backend's few small objects gain nothing
// from protobuf).
func NewClient(rc *rest.Config) (Client, error) {
	scheme, _ := codecs()
	mk := func(apiPath string, gv schema.GroupVersion) (*rest.RESTClient, error) {
		c := rest.CopyConfig(rc)
		c.APIPath, c.GroupVersion = apiPath, &gv
		c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
		c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
		if c.UserAgent == "" {
			c.UserAgent = "fullsend"
		}
		return rest.RESTClientFor(c)
	}
	core, err := mk("/api", corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	net, err := mk("/apis", networkingv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	return &restClient{core, net}, nil
}

func (c *restClient) CreatePod(ctx context.Context, p *corev1.Pod) error {
	return c.core.Post().Namespace(p.Namespace).Resource("pods").Body(p).Do(ctx).Error()
}

func (c *restClient) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	err := c.core.Get().Namespace(ns).Resource("pods").Name(name).Do(ctx).Into(&p)
	return &p, err
}

func (c *restClient) ListPods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	var l corev1.PodList
	err := c.core.Get().Namespace(ns).Resource("pods").VersionedParams(&metav1.ListOptions{LabelSelector: selector}, paramCodec()).Do(ctx).Into(&l)
	return l.Items, err
}

func (c *restClient) DeletePod(ctx context.Context, ns, name string) error {
	zero := int64(0)
	return c.core.Delete().Namespace(ns).Resource("pods").Name(name).Body(&metav1.DeleteOptions{GracePeriodSeconds: &zero}).Do(ctx).Error()
}

func (c *restClient) CreateNetworkPolicy(ctx context.Context, np *networkingv1.NetworkPolicy) error {
	return c.net.Post().Namespace(np.Namespace).Resource("networkpolicies").Body(np).Do(ctx).Error()
}

func (c *restClient) ListNetworkPolicies(ctx context.Context, ns, selector string) ([]networkingv1.NetworkPolicy, error) {
	var l networkingv1.NetworkPolicyList
	err := c.net.Get().Namespace(ns).Resource("networkpolicies").VersionedParams(&metav1.ListOptions{LabelSelector: selector}, paramCodec()).Do(ctx).Into(&l)
	return l.Items, err
}

func (c *restClient) DeleteNetworkPolicy(ctx context.Context, ns, name string) error {
	return c.net.Delete().Namespace(ns).Resource("networkpolicies").Name(name).Body(&metav1.DeleteOptions{}).Do(ctx).Error()
}
