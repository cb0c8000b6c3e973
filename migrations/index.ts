import { InitialSchema1763769600000 } from './1763769600000-initial-schema';
import { SessionsExpiryIndex1764000000091 } from './1764000000091-sessions-expiry-index';
import { VolumeLabelsAndQuotes1764000000120 } from './1764000000120-volume-labels-and-quotes';
import { AccountsAuditLog1764000000130 } from './1764000000130-accounts-audit-log';
import { RegionUsedGb1764000000140 } from './1764000000140-region-used-gb';
import { ProviderDisksStepRetries1764000000150 } from './1764000000150-provider-disks-step-retries';
import { VolumeActions1764000000160 } from './1764000000160-volume-actions';
import { AuditLogTimeOrder1764000000170 } from './1764000000170-audit-log-time-order';
import { IdempotencyKeyDigests1764000000171 } from './1764000000171-idempotency-key-digests';
import { RegionUsedGbPerStatement1764000000180 } from './1764000000180-region-used-gb-per-statement';
import { Scopes1764000000190 } from './1764000000190-scopes';
import { VolumeDiskMissing1764000000200 } from './1764000000200-volume-disk-missing';
import { LoginFailuresIndex1764000000201 } from './1764000000201-login-failures-index';
import { FailedLoginRetention1764000000202 } from './1764000000202-failed-login-retention';
import { ServerCatalog1764000000210 } from './1764000000210-server-catalog';
import { Servers1764000000211 } from './1764000000211-servers';
import { SshKeysAndFirewallRules1764000000230 } from './1764000000230-ssh-keys-and-firewall-rules';
import { WalletHistory1764000000240 } from './1764000000240-wallet-history';
import { TopUps1764000000241 } from './1764000000241-top-ups';
import { Webhooks1764000000250 } from './1764000000250-webhooks';
import { OneUnfinishedServerOperation1764000000270 } from './1764000000270-one-unfinished-server-operation';
import { ProviderInstances1764000000272 } from './1764000000272-provider-instances';
import { ProviderConsoles1764000000273 } from './1764000000273-provider-consoles';
import { ServerInstanceMissing1764000000320 } from './1764000000320-server-instance-missing';
import { WebhookDeliveriesInFlight1764000000330 } from './1764000000330-webhook-deliveries-in-flight';
import { ServerQuotes1764000000280 } from './1764000000280-server-quotes';
import { AuditClientRequestId1764000000300 } from './1764000000300-audit-client-request-id';
import { WalletLedgerPositionsSetBased1764000000301 } from './1764000000301-wallet-ledger-positions-set-based';
import { Invitations1764000000260 } from './1764000000260-invitations';

/** Every migration, in order. Listed as classes so ts (tests) and js (dist) load the same set. */
import { TemplatesAndDeployments1764000000310 } from './1764000000310-templates-and-deployments';
import { TermsSuspension1764000000340 } from './1764000000340-terms-suspension';
import { AutoRenew1764000000342 } from './1764000000342-auto-renew';
import { ExpiryNotices1764000000341 } from './1764000000341-expiry-notices';
import { AdminApi1764000000370 } from './1764000000370-admin-api';
import { TopUpRefunds1764000000371 } from './1764000000371-top-up-refunds';
import { StaffAuditChanges1764000000376 } from './1764000000376-staff-audit-changes';
import { Snapshots1764000000410 } from './1764000000410-snapshots';
import { AgentPlacements1764000000440 } from './1764000000440-agent-placements';
import { PurchaseDeferredKeys1764000000450 } from './1764000000450-purchase-deferred-keys';
import { ServerImages1764000000460 } from './1764000000460-server-images';
import { Networks1764000000480 } from './1764000000480-networks';
import { ReservedIps1764000000490 } from './1764000000490-reserved-ips';
import { RegionSlots1764000000500 } from './1764000000500-region-slots';
import { ServerSshKeyIds1764000000360 } from './1764000000360-server-ssh-key-ids';
import { LoginFailuresByEmail1764000000350 } from './1764000000350-login-failures-by-email';
import { WebhookDeliveriesDuePerEndpoint1764000000351 } from './1764000000351-webhook-deliveries-due-per-endpoint';
import { ResizeReservations1764000000400 } from './1764000000400-resize-reservations';
export const MIGRATIONS = [
  InitialSchema1763769600000,
  SessionsExpiryIndex1764000000091,
  VolumeLabelsAndQuotes1764000000120,
  AccountsAuditLog1764000000130,
  RegionUsedGb1764000000140,
  ProviderDisksStepRetries1764000000150,
  VolumeActions1764000000160,
  AuditLogTimeOrder1764000000170,
  IdempotencyKeyDigests1764000000171,
  RegionUsedGbPerStatement1764000000180,
  Scopes1764000000190,
  VolumeDiskMissing1764000000200,
  LoginFailuresIndex1764000000201,
  FailedLoginRetention1764000000202,
  ServerCatalog1764000000210,
  Servers1764000000211,
  SshKeysAndFirewallRules1764000000230,
  WalletHistory1764000000240,
  TopUps1764000000241,
  Webhooks1764000000250,
  Invitations1764000000260,
  OneUnfinishedServerOperation1764000000270,
  ProviderInstances1764000000272,
  ProviderConsoles1764000000273,
  ServerQuotes1764000000280,
  AuditClientRequestId1764000000300,
  WalletLedgerPositionsSetBased1764000000301,
  TemplatesAndDeployments1764000000310,
  ServerInstanceMissing1764000000320,
  WebhookDeliveriesInFlight1764000000330,
  TermsSuspension1764000000340,
  ExpiryNotices1764000000341,
  AutoRenew1764000000342,
  LoginFailuresByEmail1764000000350,
  WebhookDeliveriesDuePerEndpoint1764000000351,
  ServerSshKeyIds1764000000360,
  AdminApi1764000000370,
  TopUpRefunds1764000000371,
  StaffAuditChanges1764000000376,
  ResizeReservations1764000000400,
  Snapshots1764000000410,
  AgentPlacements1764000000440,
  PurchaseDeferredKeys1764000000450,
  ServerImages1764000000460,
  Networks1764000000480,
  ReservedIps1764000000490,
  RegionSlots1764000000500,
];
