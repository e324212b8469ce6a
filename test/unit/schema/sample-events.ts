/**
 * Events shaped like the AWS sample's generator (shared/reference/sample-events.md): common
 * fields, then ORDER / USER / CLICK specifics; v2 adds `user_agent` (USER) and `scroll_depth`
 * (CLICK). Written as NDJSON text so tests go through the real parser.
 */
export const ORDER_V1 =
  '{"event_id":"ORDER-3f1c9a52-7d4e-4b8a-9c1e-2a6b5d8e9f01","event_time":"2024-05-01T12:34:56.789Z","event_type":"ORDER","region":"us-east-1","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v1"},"order_id":"ORD-A1B2C3D4","customer_id":"CUST-0042","amount":123.45,"currency":"USD","status":"pending","items":[]}';
export const ORDER_V2 =
  '{"event_id":"ORDER-0b7e1d3c-5a9f-4e2d-8c6b-1f4a7e9d2c35","event_time":"2024-05-01T12:35:01.002Z","event_type":"ORDER","region":"eu-west-1","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v2"},"order_id":"ORD-Z9Y8X7W6","customer_id":"CUST-9999","amount":10,"currency":"EUR","status":"shipped","items":[]}';
export const USER_V1 =
  '{"event_id":"USER-8d2f4b6a-1c3e-4f5a-9b7d-0e2c4a6f8b1d","event_time":"2024-05-01T12:34:57.000Z","event_type":"USER","region":"us-west-2","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v1"},"user_id":"USER-17","action":"login","device_type":"mobile","ip_address":"192.168.1.20"}';
export const USER_V2 =
  '{"event_id":"USER-5e7a9c1b-3d5f-4a7c-8e9b-2d4f6a8c0e3b","event_time":"2024-05-01T12:35:02.120Z","event_type":"USER","region":"ap-southeast-1","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v2"},"user_id":"USER-4999","action":"signup","device_type":"tablet","ip_address":"10.0.0.7","user_agent":"Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X)"}';
export const CLICK_V1 =
  '{"event_id":"CLICK-2c4e6a8b-0d1f-4c3e-a5b7-9d1f3b5c7e9a","event_time":"2024-05-01T12:34:58.500Z","event_type":"CLICK","region":"us-east-1","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v1"},"session_id":"SESSION-a1b2c3d4e5f6","page_url":"https://example.com/page7","referrer":"google.com","time_on_page_seconds":42}';
export const CLICK_V2 =
  '{"event_id":"CLICK-7f9b1d3e-5a7c-4e9f-b1d3-5f7a9c1e3b5d","event_time":"2024-05-01T12:35:03.999Z","event_type":"CLICK","region":"eu-west-1","event_date":"2024-05-01","metadata":{"source":"data-generator","schema_version":"v2"},"session_id":"SESSION-f6e5d4c3b2a1","page_url":"https://example.com/page12","referrer":"example.com","time_on_page_seconds":304,"scroll_depth":99}';
