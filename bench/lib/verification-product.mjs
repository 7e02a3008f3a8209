// A verification product for a bench, made through verification-api's admin API: the product, a production
// key and a default individual level with the given steps. Answers the partner headers of that key.
export async function benchProduct(apiUrl, adminToken, steps) {
  const admin = async (path, body) => {
    const res = await fetch(`${apiUrl}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const product = await admin('/products', { name: 'Bench' });
  const key = await admin(`/products/${product.id}/keys`, { environment: 'production' });
  await admin(`/products/${product.id}/levels`, {
    name: 'BENCH_KYC',
    applicantType: 'individual',
    isDefault: true,
    steps,
  });
  return { 'x-api-key': key.apiKey, 'x-api-secret': key.apiSecret, 'x-environment': 'production' };
}
